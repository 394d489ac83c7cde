// A stand-in for the server's diff content, for as long as `openheim serve`
// does not send it: sits on the page's /ws (page.routeWebSocket, a real
// connection to the real server behind it) and, on the server's tool calls
// and permission requests of write_file and edit_file that carry no diff,
// adds the ACP content the server is to send:
//   content: [{type: "diff", path (absolute), oldText (null: a new file), newText}]
// computed from the call's arguments and the file on disk when the call is
// first seen (before it runs). Frames that already carry a diff pass as
// they are, and are counted: the report says which path the test took
// (with OPENHEIM_E2E_DIFFS=server it only counts them).
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";

export const seen = { injected: 0, fromServer: 0 };

/**
 * Routes the page's /ws through the injector; workdir resolves relative
 * paths. With inject false it only counts the server's own diffs.
 */
export async function injectDiffs(page, workdir, inject = true) {
  await page.routeWebSocket(/\/ws(\?|$)/, (ws) => {
    const fill = filler(workdir, inject); // per connection: a reload replays, and replays get none
    const server = ws.connectToServer();
    ws.onMessage((m) => server.send(m));
    server.onMessage((m) => {
      if (typeof m !== "string") return ws.send(m);
      let env;
      try {
        env = JSON.parse(m);
      } catch {
        return ws.send(m);
      }
      const msg = env && env.channel === "agent" ? env.data : null;
      let changed = false;
      if (msg && msg.method === "session/request_permission") changed = fill(msg.params?.toolCall, true);
      const u = msg && msg.method === "session/update" ? msg.params?.update : null;
      if (u && (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")) changed = fill(u, false);
      ws.send(changed ? JSON.stringify(env) : m);
    });
    ws.onClose((code, reason) => server.close({ code, reason }));
    server.onClose((code, reason) => ws.close({ code, reason }));
  });
}

// filler returns fill(toolCall, asking), which adds the diff content to a
// tool call (or the toolCall of a permission request: asking) in place and
// reports whether it did.
function filler(workdir, inject) {
  const byCall = new Map(); // toolCallId -> diff content (or null: not an edit)
  // Only live calls: a replayed one (session/load: in_progress first) ran
  // long ago, and the file on disk says nothing of what it changed.
  return (tc, asking) => {
    if (!tc || typeof tc !== "object") return false;
    if (Array.isArray(tc.content) && tc.content.some((c) => c && c.type === "diff")) {
      seen.fromServer++;
      byCall.set(tc.toolCallId, tc.content.filter((c) => c.type === "diff"));
      return false;
    }
    if (!inject) return false;
    if (!byCall.has(tc.toolCallId)) {
      if (!asking && tc.status !== "pending") return false;
      if (tc.rawInput === undefined) return false; // nothing to compute it from (yet)
      byCall.set(tc.toolCallId, computeDiff(tc.title, tc.rawInput, workdir));
    }
    const d = byCall.get(tc.toolCallId);
    if (!d) return false;
    tc.content = [...d, ...(Array.isArray(tc.content) ? tc.content : [])];
    seen.injected++;
    return true;
  };
}

function computeDiff(title, input, workdir) {
  const tool = /\b(write_file|edit_file)\b/.exec(title || "")?.[1];
  const args = typeof input === "string" ? safeJSON(input) : input;
  if (!tool || !args || typeof args.path !== "string") return null;
  const path = isAbsolute(args.path) ? args.path : join(workdir, args.path);
  const old = existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8") : null;
  if (tool === "write_file" && typeof args.content === "string") {
    return [{ type: "diff", path, oldText: old, newText: args.content }];
  }
  if (tool === "edit_file" && typeof args.old_string === "string" && old !== null) {
    const next = args.replace_all ? old.split(args.old_string).join(args.new_string) : old.replace(args.old_string, () => args.new_string);
    return [{ type: "diff", path, oldText: old, newText: next }];
  }
  return null;
}

function safeJSON(s) {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
