// Drives the built-in web client of `openheim serve` in a real headless
// Chromium (Debian's /usr/bin/chromium, through playwright-core), as a
// person would. Usage:
//
//   node e2e.mjs URL WORKDIR OUTDIR
//   (or OPENHEIM_URL, OPENHEIM_WORKDIR, OPENHEIM_WEB_SHOTS)
//
// URL is the web client's address as `openheim serve` printed it, with the
// token after "#" (http://127.0.0.1:PORT/#token=...): the page is loaded
// from it, as a person would click it. WORKDIR is its work_dir, OUTDIR
// where a full-page screenshot is saved after each step (NN-step.png, and
// NN-step-FAILED.png when a step fails). The model is the fake LLM of
// cmd/openheim/web_test.go, which answers by the [e2e:...] markers of the
// prompts (steps-chat.mjs): keep the two in step. Console errors and
// uncaught page errors fail the run. Exits 1 with a message on the first
// failed step.
//
// OPENHEIM_E2E_DIFFS says where the diffs of edit tool calls come from:
// "server" (the server's own ACP content) or "inject" (inject.mjs adds
// them on the page's /ws, for a server that does not send them yet).
import { t, step, start, finish, log } from "./harness.mjs";
import { injectDiffs, seen } from "./inject.mjs";
import * as chat from "./steps-chat.mjs";
import * as more from "./steps-more.mjs";

const [url, workdir, outdir] = [
  process.argv[2] || process.env.OPENHEIM_URL,
  process.argv[3] || process.env.OPENHEIM_WORKDIR,
  process.argv[4] || process.env.OPENHEIM_WEB_SHOTS,
];
if (!url || !workdir || !outdir) {
  console.error("usage: node e2e.mjs URL WORKDIR OUTDIR");
  process.exit(2);
}
const diffs = process.env.OPENHEIM_E2E_DIFFS || "server";
if (diffs !== "server" && diffs !== "inject") {
  console.error(`OPENHEIM_E2E_DIFFS=${diffs}: want server or inject`);
  process.exit(2);
}

const page = await start({ url, outdir });
t.workdir = workdir;
await injectDiffs(page, workdir, diffs === "inject");
log(`diffs of edit tool calls: ${diffs === "inject" ? "injected by inject.mjs on /ws" : "from the server"}`);

await step("load", chat.load);
await step("prompt-tool-card", chat.promptToolCard);
await step("working", chat.working);
await step("permission", chat.permission);
await step("edit-diff", chat.editDiff);
await step("stop", chat.stop);
await step("file-tree-live", more.fileTreeLive);
await step("replay", more.replay);
await step("narrow", more.narrow);
// ---- the rest of the contract, at desktop size ----
await step("tools-view", more.toolsView);
await step("editor", more.editor);
await step("new-session", more.newSession);
await step("search-rename", more.searchRename);
await step("delete", more.remove);

// How many frames inject.mjs filled, and how many carried the server's own diffs.
await finish({ diffs: { mode: diffs, ...seen } });
