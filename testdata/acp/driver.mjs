// Drives `openheim acp` with the official ACP TypeScript SDK, as an editor
// would. Usage: node driver.mjs OPENHEIM_BIN CONFIG WORKDIR
// Prints one JSON report on stdout; exits 1 on the first failed check.
// The SDK validates every message against the ACP schema and drops invalid
// session/update notifications with "Error handling notification" on
// stderr: the Go test fails on that text too.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const [bin, config, work] = process.argv.slice(2);
const report = { checks: [], updates: {}, permissions: [], fsReads: [], fsWrites: [] };
const started = performance.now();
function check(name, ok, detail) {
  report.checks.push({ name, ok: !!ok, detail, atMs: Math.round(performance.now() - started) });
  if (!ok) {
    console.log(JSON.stringify(report));
    console.error(`check failed: ${name}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
}

const child = spawn(bin, ["--config", config, "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let onUpdate = () => {};
const updates = [];
const app = acp
  .client({ name: "openheim-test-driver" })
  .onNotification(acp.methods.client.session.update, (ctx) => {
    const u = ctx.params.update;
    report.updates[u.sessionUpdate] = (report.updates[u.sessionUpdate] || 0) + 1;
    updates.push(ctx.params);
    onUpdate(ctx.params);
  })
  .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
    report.permissions.push({ title: ctx.params.toolCall.title, options: ctx.params.options.map((o) => o.kind) });
    const allow = ctx.params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, (ctx) => {
    report.fsReads.push(ctx.params.path);
    return { content: readFileSync(ctx.params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, (ctx) => {
    report.fsWrites.push(ctx.params.path);
    mkdirSync(dirname(ctx.params.path), { recursive: true });
    writeFileSync(ctx.params.path, ctx.params.content);
    return {};
  });

// The timers are unref'd: a pending one must not keep node alive after the run.
const timed = (ms, p, what) =>
  Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout: ${what}`)), ms).unref())]);

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: "openheim-test-driver", version: "1.0.0" },
  });
  check("initialize: protocol version 1", init.protocolVersion === 1, init.protocolVersion);
  check("initialize: loadSession", init.agentCapabilities.loadSession === true, init.agentCapabilities);
  check("initialize: _meta.tools", Array.isArray(init._meta?.tools) && init._meta.tools.length > 0, init._meta);

  const created = await ctx.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
  const sessionId = created.sessionId;
  check("session/new: id", /^[0-9a-f-]{36}$/.test(sessionId), created);
  check("session/new: modes", created.modes?.currentModeId === "code", created.modes);

  // 1. A turn with a tool call that needs permission and writes through the client.
  const r1 = await timed(15000, ctx.request(acp.methods.agent.session.prompt, {
    sessionId, prompt: [{ type: "text", text: "Write hello.txt" }],
  }), "prompt 1");
  check("prompt 1: end_turn", r1.stopReason === "end_turn", r1);
  check("prompt 1: permission asked", report.permissions.length === 1 && report.permissions[0].options.length === 4, report.permissions);
  check("prompt 1: client fs write", report.fsWrites.some((p) => p.endsWith("hello.txt")), report.fsWrites);
  check("prompt 1: tool_call + completed update", updates.some((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed"), updates.length);
  check("prompt 1: title after first turn", updates.some((u) => u.update.sessionUpdate === "session_info_update" && u.update.title), updates.map((u) => u.update.sessionUpdate));

  // 2. Cancel mid-turn: the prompt answers cancelled, never an error.
  const firstChunk = new Promise((res) => { onUpdate = (u) => { if (u.update.sessionUpdate === "agent_message_chunk") res(); }; });
  const p2 = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Think for a long time" }] });
  await timed(15000, firstChunk, "first chunk of prompt 2");
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  const r2 = await timed(15000, p2, "cancelled prompt");
  check("prompt 2: cancelled", r2.stopReason === "cancelled", r2);

  // 3. Latency to the first chunk, and streaming throughput.
  let t0 = performance.now();
  const latency = new Promise((res) => { onUpdate = (u) => { if (u.update.sessionUpdate === "agent_message_chunk") res(performance.now() - t0); }; });
  const p3 = ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Say hi" }] });
  report.firstChunkMs = await timed(15000, latency, "latency");
  await p3;
  let n = 0;
  onUpdate = (u) => { if (u.update.sessionUpdate === "agent_message_chunk") n++; };
  t0 = performance.now();
  const r4 = await timed(60000, ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Stream a lot" }] }), "throughput");
  const secs = (performance.now() - t0) / 1000;
  report.streamed = n;
  report.notificationsPerSecond = Math.round(n / secs);
  check("prompt 4: end_turn", r4.stopReason === "end_turn", r4);
  onUpdate = () => {};

  // 4. List, load (replay), resume, delete.
  const list = await ctx.request(acp.methods.agent.session.list, {});
  check("session/list", list.sessions.some((s) => s.sessionId === sessionId && s.cwd === work), list);
  check("session/list: last page has no nextCursor", list.nextCursor === undefined || list.nextCursor === null, list.nextCursor);
  const before = updates.length;
  const loaded = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: work, mcpServers: [] });
  check("session/load: answers an object", loaded !== null && typeof loaded === "object", loaded);
  const replay = updates.slice(before).map((u) => u.update.sessionUpdate);
  check("session/load: replays the history", replay[0] === "user_message_chunk" && replay.includes("tool_call") && replay.includes("tool_call_update") && replay.includes("agent_message_chunk"), replay);
  const resumed = await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: work, mcpServers: [] });
  check("session/resume", resumed !== null && typeof resumed === "object", resumed);
  await ctx.request(acp.methods.agent.session.delete, { sessionId });
  let gone = null;
  try { await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: work, mcpServers: [] }); } catch (e) { gone = e; }
  check("deleted session is not found", gone && gone.code === -32002, gone && { code: gone.code, message: gone.message, data: gone.data });
});

child.stdin.end();
const code = await new Promise((res) => child.on("exit", (c, s) => res(c ?? s)));
check("openheim acp exits 0 on stdin EOF", code === 0, code);
console.log(JSON.stringify(report));
