// Preloaded with `node --require` by the tests: servers that listen on every
// interface (server-everything's streamableHttp) bind to 127.0.0.1 instead.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    const cb = args.find((a) => typeof a === "function");
    return listen.call(this, { port: Number(first), host: "127.0.0.1" }, cb);
  }
  if (first && typeof first === "object" && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
