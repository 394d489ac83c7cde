// Drives `openheim serve` over WebSocket with the official ACP TypeScript
// SDK, as a web front end would.
// Usage: node --experimental-websocket ws-driver.mjs URL MODE WORKDIR [TOKEN]
//   URL   ws://127.0.0.1:PORT
//   MODE  acp: bare ACP on URL/acp, through the SDK's experimental ws-client
//         ws:  the envelope {"channel":"agent","data":<JSON-RPC>} on URL/ws,
//              through Node's WebSocket and the adapter below
//   TOKEN the server's token (default $OPENHEIM_TOKEN), sent as ?token= on
//         the handshake: a browser's WebSocket cannot set headers either
// The fake model must be scripted with a list_dir tool call, then the text
// that TEXT below names. Prints one JSON report on stdout; exits 1 on the
// first failed check. The SDK drops session/update notifications that fail
// its schema with "Error handling notification" on stderr: the Go test fails
// on that text.
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const [base, mode, work, tokenArg] = process.argv.slice(2);
if (!base || !["acp", "ws"].includes(mode) || !work) {
  console.error("usage: node --experimental-websocket ws-driver.mjs ws://HOST:PORT acp|ws WORKDIR [TOKEN]");
  process.exit(2);
}
const token = tokenArg || process.env.OPENHEIM_TOKEN || "";
const withToken = (path) => `${base}${path}${token ? `?token=${encodeURIComponent(token)}` : ""}`;
if (typeof globalThis.WebSocket !== "function") {
  console.error("no global WebSocket: run node with --experimental-websocket (Node 20) or use Node >= 22");
  process.exit(2);
}

const PROMPT = "List the work directory";
const TEXT = "Listed the work directory.";

const report = { mode, checks: [], updates: {}, replay: [], permissions: [], frames: {} };
const started = performance.now();
function check(name, ok, detail) {
  report.checks.push({ name, ok: !!ok, detail, atMs: Math.round(performance.now() - started) });
  if (!ok) {
    console.log(JSON.stringify(report));
    console.error(`check failed: ${name}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
}

// The timers are unref'd: a pending one must not keep node alive after the run.
const timed = (ms, p, what) =>
  Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout after ${ms} ms: ${what}`)), ms).unref())]);

// envelopeStream adapts WS /ws to the SDK's Stream: a ReadableStream of the
// JSON-RPC messages that arrive as {"channel":"agent","data":msg} and a
// WritableStream whose messages go out in that envelope. Frames on the other
// channels (fs, system) are counted in report.frames and otherwise ignored.
// greeting resolves with the first frame the server sent.
function envelopeStream(url) {
  const socket = new WebSocket(url);
  let controller;
  let closed = false;
  let resolveGreeting, rejectGreeting;
  const greeting = new Promise((res, rej) => { resolveGreeting = res; rejectGreeting = rej; });
  greeting.catch(() => {});
  const opened = new Promise((res, rej) => {
    socket.addEventListener("open", () => res(), { once: true });
    socket.addEventListener("error", (e) => rej(new Error(`websocket error before open: ${e.message ?? e.type}`)), { once: true });
  });
  opened.catch(() => {});
  let first = true;
  socket.addEventListener("message", (ev) => {
    if (typeof ev.data !== "string") {
      report.frames.binary = (report.frames.binary || 0) + 1;
      return;
    }
    let env;
    try {
      env = JSON.parse(ev.data);
    } catch {
      report.frames.unparsable = (report.frames.unparsable || 0) + 1;
      return;
    }
    if (first) {
      first = false;
      resolveGreeting(env);
    }
    const ch = env && typeof env === "object" ? String(env.channel) : "?";
    report.frames[ch] = (report.frames[ch] || 0) + 1;
    if (ch !== "agent") return; // fs, system: not ACP
    if (env.data === null || typeof env.data !== "object" || Array.isArray(env.data)) {
      report.frames.badAgentData = (report.frames.badAgentData || 0) + 1;
      return;
    }
    if (!closed) controller.enqueue(env.data);
  });
  const finish = (err) => {
    if (closed) return;
    closed = true;
    rejectGreeting(err ?? new Error("socket closed before the greeting"));
    try { err ? controller.error(err) : controller.close(); } catch {}
  };
  socket.addEventListener("close", () => finish());
  socket.addEventListener("error", () => finish(new Error("websocket error")));
  const close = () => {
    try { socket.close(1000); } catch {}
    finish();
  };
  const stream = {
    readable: new ReadableStream({ start: (c) => { controller = c; }, cancel: close }),
    writable: new WritableStream({
      async write(msg) {
        await opened;
        if (closed || socket.readyState !== WebSocket.OPEN) throw new Error("/ws is closed");
        socket.send(JSON.stringify({ channel: "agent", data: msg }));
      },
      close,
      abort: close,
    }),
  };
  return { stream, greeting, socket };
}

// connect opens one connection of the chosen mode and runs op with the SDK
// client context; onUpdate sees every session/update.
async function connect(label, onUpdate, op) {
  let stream, socketClosed;
  if (mode === "acp") {
    stream = createWebSocketStream(withToken("/acp"));
  } else {
    const e = envelopeStream(withToken("/ws"));
    stream = e.stream;
    socketClosed = new Promise((res) => e.socket.addEventListener("close", () => res(), { once: true }));
    const g = await timed(10000, e.greeting, `${label}: /ws greeting`);
    check(`${label}: /ws greets first on channel fs`,
      g?.channel === "fs" && g?.data?.type === "connected" && g?.data?.message === "Connected to Openheim", g);
  }
  const app = acp
    .client({ name: "openheim-ws-test-driver" })
    .onNotification(acp.methods.client.session.update, (ctx) => {
      const u = ctx.params.update;
      report.updates[u.sessionUpdate] = (report.updates[u.sessionUpdate] || 0) + 1;
      onUpdate(ctx.params);
    })
    .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
      report.permissions.push({ title: ctx.params.toolCall.title, options: ctx.params.options.map((o) => o.kind) });
      const allow = ctx.params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
  await timed(45000, app.connectWith(stream, async (ctx) => {
    const init = await timed(10000, ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "openheim-ws-test-driver", version: "1.0.0" },
    }), `${label}: initialize`);
    check(`${label}: initialize: protocol version 1`, init.protocolVersion === 1, init.protocolVersion);
    check(`${label}: initialize: loadSession`, init.agentCapabilities?.loadSession === true, init.agentCapabilities);
    await op(ctx);
  }), `${label}: connection`);
  if (socketClosed) await timed(10000, socketClosed, `${label}: /ws closes`);
}

// 1. First connection: a new session and a prompt with a tool call.
let sessionId;
const updates = [];
await connect("conn 1", (p) => updates.push(p), async (ctx) => {
  // The server confines sessions to its work_dir: the SDK sees -32602.
  const refused = await timed(10000, ctx.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] }).then(() => null, (e) => e),
    "session/new outside work_dir");
  check("session/new outside work_dir: -32602", refused?.code === -32602 && /outside/.test(JSON.stringify(refused?.data)),
    refused && { code: refused.code, data: refused.data });
  const created = await timed(10000, ctx.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] }), "session/new");
  sessionId = created.sessionId;
  check("session/new: id", /^[0-9a-f-]{36}$/.test(sessionId), created);

  const r = await timed(20000, ctx.request(acp.methods.agent.session.prompt, {
    sessionId, prompt: [{ type: "text", text: PROMPT }],
  }), "session/prompt");
  check("prompt: end_turn", r.stopReason === "end_turn", r);
  const mine = updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  const text = mine.filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text").map((u) => u.content.text).join("");
  report.text = text;
  check("prompt: agent_message_chunk text is what the model streamed", text === TEXT, text);
  const call = mine.find((u) => u.sessionUpdate === "tool_call");
  check("prompt: tool_call", call && call.toolCallId, mine.map((u) => u.sessionUpdate));
  check("prompt: tool_call_update completed", mine.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status === "completed"),
    mine.filter((u) => u.sessionUpdate.startsWith("tool_call")));
  report.toolCall = { title: call.title, kind: call.kind };

  const list = await timed(10000, ctx.request(acp.methods.agent.session.list, {}), "session/list");
  check("session/list contains the session", list.sessions.some((s) => s.sessionId === sessionId && s.cwd === work), list);
});

// 2. Second connection: session/load replays the history.
const replayed = [];
await connect("conn 2", (p) => replayed.push(p), async (ctx) => {
  const loaded = await timed(10000, ctx.request(acp.methods.agent.session.load, { sessionId, cwd: work, mcpServers: [] }), "session/load");
  check("session/load: answers an object", loaded !== null && typeof loaded === "object", loaded);
  const mine = replayed.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  report.replay = mine.map((u) => u.sessionUpdate);
  const userText = mine.filter((u) => u.sessionUpdate === "user_message_chunk" && u.content?.type === "text").map((u) => u.content.text).join("");
  check("session/load: replays the prompt as user_message_chunk", mine[0]?.sessionUpdate === "user_message_chunk" && userText === PROMPT, { first: mine[0], userText });
  check("session/load: replays the tool call and the answer",
    report.replay.includes("tool_call") && report.replay.includes("tool_call_update") &&
    mine.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text ?? "").join("") === TEXT, report.replay);
});

console.log(JSON.stringify(report));
