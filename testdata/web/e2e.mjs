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
// prompts below: keep the two in step. Console errors and uncaught page
// errors fail the run. Exits 1 with a message on the first failed step.
import { chromium } from "playwright-core";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [url, workdir, outdir] = [
  process.argv[2] || process.env.OPENHEIM_URL,
  process.argv[3] || process.env.OPENHEIM_WORKDIR,
  process.argv[4] || process.env.OPENHEIM_WEB_SHOTS,
];
if (!url || !workdir || !outdir) {
  console.error("usage: node e2e.mjs URL WORKDIR OUTDIR");
  process.exit(2);
}
mkdirSync(outdir, { recursive: true });
// The token, for this script's own API calls (the page takes it from the
// address itself).
const TOKEN = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
if (!TOKEN) {
  console.error(`e2e.mjs: ${url} carries no #token=`);
  process.exit(2);
}
/** GET an API path with the token; the decoded JSON. */
const apiGet = async (path) => (await fetch(new URL(path, url), { headers: { Authorization: `Bearer ${TOKEN}` } })).json();

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const STEP_MS = 20_000; // the default wait of a step's expectations
// OPENHEIM_E2E_KEEP_GOING=1 runs every step even after one failed (for
// debugging the client; later steps may fail for the earlier one's sake).
const KEEP_GOING = !!process.env.OPENHEIM_E2E_KEEP_GOING;

// The prompts and what the fake model does with them (web_test.go).
const PROMPT_LIST = "Please list the work directory [e2e:list]";
const PROMPT_WRITE = "Write a greeting file [e2e:write]";
const PROMPT_STOP = "Think about it for a long time [e2e:stop]";
const LIST_ANSWER = "Listed the work directory.";
const CODE_LINE = "func main() {}";
const WRITE_FILE = "greeting.txt";
const WRITE_CONTENT = "hello from the browser\n";
const STOP_TEXT = "Thinking it over";

const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

// Problems the page reports: any of them fails the step it happens in.
const problems = [];
const dialogs = []; // every window.alert/confirm/prompt, accepted
let dialogAnswer = null; // the text a window.prompt is answered with

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 60_000 });
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
context.setDefaultTimeout(STEP_MS);
const page = await context.newPage();
page.on("console", (m) => {
  if (m.type() === "error") {
    const loc = m.location();
    problems.push(`console error: ${m.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ""}`);
  }
});
page.on("pageerror", (e) => problems.push(`page error: ${e.stack || e.message || e}`));
page.on("crash", () => problems.push("the page crashed"));
page.on("dialog", async (d) => {
  dialogs.push({ type: d.type(), message: d.message() });
  log(`dialog ${d.type()}: ${JSON.stringify(d.message())}`);
  if (d.type() === "prompt") await d.accept(dialogAnswer ?? d.defaultValue());
  else await d.accept();
});

class StepError extends Error {}
const fail = (msg) => {
  throw new StepError(msg);
};
const expect = (ok, msg) => {
  if (!ok) fail(msg);
};

let stepNo = 0;
let reported = 0; // problems already charged to a step
const results = [];
async function step(name, fn) {
  stepNo++;
  const id = `${String(stepNo).padStart(2, "0")}-${name}`;
  const t0 = Date.now();
  const before = reported; // also what came in since the last step
  try {
    await fn(id);
    await page.waitForTimeout(100); // late console errors of this step
    reported = problems.length;
    expect(reported === before, `the page reported:\n  ${problems.slice(before).join("\n  ")}`);
    await shot(id);
    results.push({ step: id, ok: true, ms: Date.now() - t0 });
    log(`ok   ${id} (${Date.now() - t0} ms)`);
  } catch (e) {
    reported = problems.length;
    await shot(`${id}-FAILED`).catch(() => {});
    const extra = problems.slice(before);
    console.error(`FAIL ${id} after ${Date.now() - t0} ms: ${e instanceof StepError ? e.message : e.stack || e}`);
    if (extra.length && !(e instanceof StepError && e.message.startsWith("the page reported"))) {
      console.error(`  the page also reported:\n    ${extra.join("\n    ")}`);
    }
    console.error(`  screenshot: ${join(outdir, `${id}-FAILED.png`)}`);
    console.error(`  #messages: ${await texts("#messages").catch(() => "?")}`);
    results.push({ step: id, ok: false, ms: Date.now() - t0 });
    if (KEEP_GOING) return; // debugging: see every step's outcome
    console.error(JSON.stringify({ results, failed: id, dialogs }));
    await browser.close().catch(() => {});
    process.exit(1);
  }
}

async function shot(name) {
  await page.screenshot({ path: join(outdir, `${name}.png`), fullPage: true, timeout: 10_000 });
}

// The visible text of a selector's first match, squeezed, for messages.
async function texts(sel) {
  const t = await page.locator(sel).first().innerText({ timeout: 1000 });
  return JSON.stringify(t.replace(/\s+/g, " ").slice(0, 600));
}

// waitFor waits until fn (run in the page) returns a truthy value.
async function waitFor(what, fn, arg, timeout = STEP_MS) {
  try {
    return await page.waitForFunction(fn, arg, { timeout, polling: 50 });
  } catch (e) {
    fail(`timed out after ${timeout} ms waiting for ${what}`);
  }
}

async function visible(sel, what, timeout = STEP_MS) {
  try {
    await page.locator(sel).first().waitFor({ state: "visible", timeout });
  } catch {
    fail(`timed out after ${timeout} ms waiting for ${what || sel} to be visible (${await page.locator(sel).count()} in the page)`);
  }
}

// send types a prompt in #prompt and clicks #send.
async function send(text) {
  await visible("textarea#prompt");
  await page.locator("textarea#prompt").fill(text);
  const sendBtn = page.locator("button#send");
  await waitFor("button#send to be enabled", () => !document.querySelector("button#send")?.disabled);
  await sendBtn.click();
  // The prompt shows as a user message.
  await waitFor(
    `a div.msg.user with ${JSON.stringify(text)}`,
    (t) => [...document.querySelectorAll("#messages .msg.user")].some((e) => e.textContent.includes(t)),
    text,
  );
}

// The turn has ended: #stop is disabled again.
async function turnEnded(timeout = STEP_MS) {
  await waitFor("the turn to end (button#stop disabled)", () => document.querySelector("button#stop")?.disabled === true, undefined, timeout);
}

// noOverflow fails when the page scrolls sideways, naming the elements
// that stick out past the viewport's right edge.
async function noOverflow(when) {
  const r = await page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const name = (e) => {
      const cls = typeof e.className === "string" && e.className.trim() ? `.${e.className.trim().split(/\s+/).join(".")}` : "";
      return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${cls}`;
    };
    const sticks = (e) => {
      const b = e.getBoundingClientRect();
      return b.width > 0 && b.right > vw + 0.5;
    };
    // The innermost elements that stick out past the right edge: those none
    // of whose children sticks out as far.
    const out = [];
    for (const e of document.querySelectorAll("body *")) {
      if (!sticks(e)) continue;
      const right = e.getBoundingClientRect().right;
      if ([...e.children].some((c) => sticks(c) && c.getBoundingClientRect().right >= right - 0.5)) continue;
      const b = e.getBoundingClientRect();
      let path = name(e);
      for (let p = e.parentElement, i = 0; p && p !== document.body && i < 3; p = p.parentElement, i++) path = `${name(p)} > ${path}`;
      out.push(`${path} [right=${Math.round(b.right)} width=${Math.round(b.width)}]`);
    }
    return { scroll: document.documentElement.scrollWidth, out: out.slice(0, 8) };
  });
  expect(
    r.scroll <= 360,
    `the page is ${r.scroll}px wide ${when} (horizontal overflow); sticking out: ${r.out.join("; ") || "(nothing found)"}`,
  );
}

const lastToolCard = "#messages [data-testid=tool-card] >> nth=-1";

await step("load", async () => {
  const resp = await page.goto(url, { waitUntil: "load" });
  expect(resp && resp.ok(), `GET ${url}: ${resp && resp.status()}`);
  await waitFor("body[data-ready=true]", () => document.body?.dataset.ready === "true");
  // The page took the token from the address and hid it again.
  const seen = await page.evaluate(() => ({ href: location.href, kept: sessionStorage.getItem("openheim.token"), asked: document.querySelector("dialog#token")?.open }));
  expect(seen.kept === TOKEN, `sessionStorage holds ${JSON.stringify(seen.kept)}, not the token of the address`);
  expect(!seen.href.includes(TOKEN) && !seen.href.includes("token="), `the address bar still shows the token: ${seen.href}`);
  expect(!seen.asked, "the page asked for a token it was given");
  const anon = await fetch(new URL("/api/sessions", url));
  expect(anon.status === 401, `GET /api/sessions without the token: ${anon.status}, want 401`);
  const status = await page.locator("#conn-status").innerText();
  expect(/connected/i.test(status) && !/reconnect|offline/i.test(status), `#conn-status says ${JSON.stringify(status)}, want connected`);
  for (const sel of ["#sessions", "#messages", "textarea#prompt", "button#send", "button#stop", "#file-tree"]) {
    expect((await page.locator(sel).count()) === 1, `no ${sel} in the page`);
  }
});

await step("prompt-tool-card", async () => {
  await send(PROMPT_LIST);
  await waitFor(
    "a tool card with data-status=completed",
    () => document.querySelector('#messages [data-testid=tool-card][data-status="completed"]'),
  );
  await waitFor(
    `an assistant message with ${JSON.stringify(LIST_ANSWER)} and a pre code block`,
    ([t, code]) =>
      [...document.querySelectorAll("#messages .msg.assistant")].some(
        (e) => e.textContent.includes(t) && [...e.querySelectorAll("pre code")].some((c) => c.textContent.includes(code)),
      ),
    [LIST_ANSWER, CODE_LINE],
  );
  await turnEnded();
  const card = page.locator("#messages [data-testid=tool-card]").first();
  const kind = await card.getAttribute("data-kind");
  expect(kind === "read", `the list_dir tool card has data-kind=${JSON.stringify(kind)}, want "read"`);
  expect(
    (await page.locator("#messages .msg.assistant button.copy").count()) > 0,
    "the assistant's code block has no button.copy",
  );
  expect((await page.locator("#messages details.thinking").count()) > 0, "the model's thinking is not shown as details.thinking");
  // Markdown: **notes.md** is bold, not literal asterisks.
  const md = await page.evaluate(() =>
    [...document.querySelectorAll("#messages .msg.assistant")].map((e) => e.innerHTML).join("\n"),
  );
  expect(!md.includes("**notes.md**") && /<(strong|b)>notes\.md<\/(strong|b)>/.test(md), "**notes.md** is not rendered bold");
  // The answer's token usage against the provider's context_window (web_test.go: 100000).
  await waitFor(
    'span#usage to say "context: N / 100000 tokens"',
    () => /^context: [1-9]\d* \/ 100000 tokens$/.test(document.querySelector("span#usage")?.textContent.trim() || ""),
    undefined,
    5000,
  );
  log(`span#usage: ${await page.locator("span#usage").innerText()}`);
});

await step("permission", async () => {
  const file = join(workdir, WRITE_FILE);
  expect(!existsSync(file), `${file} exists before the write`);
  await send(PROMPT_WRITE);
  await visible("dialog#permission[open]", "the permission dialog (dialog#permission[open])");
  await shot(`${String(stepNo).padStart(2, "0")}a-permission-dialog`);
  const kinds = await page.locator("dialog#permission button[data-option-kind]").evaluateAll((bs) => bs.map((b) => b.dataset.optionKind));
  for (const k of ["allow_once", "allow_always", "reject_once"]) {
    expect(kinds.includes(k), `the permission dialog has no ${k} button (it has ${JSON.stringify(kinds)})`);
  }
  await page.locator("dialog#permission button[data-option-kind=allow_once]").click();
  await waitFor("the permission dialog to close", () => !document.querySelector("dialog#permission")?.open);
  await waitFor(
    "the write_file tool card to complete",
    () => {
      const cards = document.querySelectorAll("#messages [data-testid=tool-card]");
      return cards.length >= 2 && cards[cards.length - 1].dataset.status === "completed";
    },
  );
  const kind = await page.locator(lastToolCard).getAttribute("data-kind");
  expect(kind === "edit", `the write_file tool card has data-kind=${JSON.stringify(kind)}, want "edit"`);
  await waitFor(
    `the answer "Wrote ${WRITE_FILE}."`,
    (t) => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.includes(t)),
    `Wrote ${WRITE_FILE}.`,
  );
  await turnEnded();
  expect(existsSync(file), `${file} does not exist after allow_once`);
  const got = readFileSync(file, "utf8");
  expect(got === WRITE_CONTENT, `${file} holds ${JSON.stringify(got)}, want ${JSON.stringify(WRITE_CONTENT)}`);
});

await step("stop", async () => {
  const errorsBefore = await page.locator("#messages .msg.error").count();
  const dialogsBefore = dialogs.length;
  await send(PROMPT_STOP);
  await waitFor(
    `the streamed ${JSON.stringify(STOP_TEXT)}`,
    (t) => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.includes(t)),
    STOP_TEXT,
  );
  await waitFor("button#stop to be enabled while the turn runs", () => document.querySelector("button#stop")?.disabled === false);
  await shot(`${String(stepNo).padStart(2, "0")}a-streaming`);
  await page.locator("button#stop").click();
  await turnEnded(10_000);
  await waitFor(
    "the conversation to show the turn was cancelled",
    () => /cancel/i.test(document.querySelector("#messages")?.textContent || ""),
    undefined,
    5000,
  );
  const errorsAfter = await page.locator("#messages .msg.error").count();
  expect(errorsAfter === errorsBefore, `stopping added ${errorsAfter - errorsBefore} div.msg.error: ${await texts("#messages .msg.error >> nth=-1").catch(() => "")}`);
  expect(dialogs.length === dialogsBefore, `stopping opened a dialog: ${JSON.stringify(dialogs.slice(dialogsBefore))}`);
  expect(!(await page.locator("dialog#permission").evaluate((d) => d.open)), "the permission dialog is open");
  await waitFor("button#send to be enabled after the stop", () => !document.querySelector("button#send")?.disabled);
});

await step("file-tree-live", async () => {
  const name = `made-on-disk-${Date.now()}.txt`;
  const abs = join(workdir, name);
  await visible(`#file-tree [role=treeitem][data-path="${join(workdir, "notes.md")}"]`, "notes.md in ul#file-tree");
  writeFileSync(abs, "made by e2e.mjs\n");
  try {
    await page.locator(`#file-tree [role=treeitem][data-path="${abs}"]`).waitFor({ state: "visible", timeout: 5000 });
  } catch {
    const paths = await page.locator("#file-tree [role=treeitem]").evaluateAll((ls) => ls.map((l) => l.dataset.path));
    fail(`${abs} did not show in ul#file-tree within 5 s; the tree has ${JSON.stringify(paths)}`);
  }
});

await step("replay", async () => {
  await page.reload({ waitUntil: "load" });
  await waitFor("body[data-ready=true] after the reload", () => document.body?.dataset.ready === "true");
  const items = page.locator("#sessions [data-testid=session-item]");
  await visible("#sessions [data-testid=session-item]", "a session in the sidebar");
  expect((await items.count()) === 1, `the sidebar lists ${await items.count()} sessions, want 1`);
  const id = await items.first().getAttribute("data-session-id");
  expect(/^[0-9a-f-]{36}$/.test(id || ""), `data-session-id=${JSON.stringify(id)}`);
  await items.first().click();
  await waitFor(
    "the replayed user message of the first prompt",
    (t) => [...document.querySelectorAll("#messages .msg.user")].some((e) => e.textContent.includes(t)),
    PROMPT_LIST,
  );
  await waitFor(
    "the replayed tool cards, completed",
    () => document.querySelectorAll('#messages [data-testid=tool-card][data-status="completed"]').length >= 2,
  );
  await waitFor(
    "the replayed answer with its code block",
    ([t, code]) =>
      [...document.querySelectorAll("#messages .msg.assistant")].some(
        (e) => e.textContent.includes(t) && [...e.querySelectorAll("pre code")].some((c) => c.textContent.includes(code)),
      ),
    [LIST_ANSWER, CODE_LINE],
  );
  // One copy of the history, not the replay on top of what was shown.
  const users = await page.locator("#messages .msg.user").evaluateAll((es) => es.map((e) => e.textContent));
  const n = users.filter((t) => t.includes(PROMPT_LIST)).length;
  expect(n === 1, `the first prompt shows ${n} times after the replay`);
});

await step("narrow", async () => {
  await page.setViewportSize({ width: 360, height: 740 });
  await page.waitForTimeout(300);
  await shot(`${String(stepNo).padStart(2, "0")}a-narrow-first-look`);
  await noOverflow("at a 360px viewport");
  for (const sel of ["textarea#prompt", "button#send", "button#toggle-sessions", "button#toggle-workspace"]) {
    await visible(sel, `${sel} at 360px`, 3000);
    const box = await page.locator(sel).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 361, `${sel} lies outside the 360px viewport: ${JSON.stringify(box)}`);
  }
  // The prompt box takes text.
  await page.locator("textarea#prompt").fill("typed at 360px");
  expect((await page.locator("textarea#prompt").inputValue()) === "typed at 360px", "textarea#prompt does not take text at 360px");
  await page.locator("textarea#prompt").fill("");
  // The toggles show the sessions and the workspace.
  await page.locator("button#toggle-sessions").click();
  await visible("#sessions [data-testid=session-item]", "the sessions list after button#toggle-sessions", 3000);
  await shot(`${String(stepNo).padStart(2, "0")}b-narrow-sessions`);
  await page.locator("button#toggle-sessions").click();
  await page.locator("button#toggle-workspace").click();
  await visible("#file-tree [role=treeitem]", "the file tree after button#toggle-workspace", 3000);
  await shot(`${String(stepNo).padStart(2, "0")}c-narrow-workspace`);
  await page.locator("button#toggle-workspace").click();
  await visible("textarea#prompt", "textarea#prompt after closing the panels", 3000);
  await noOverflow("after the toggles");
});

// ---- beyond the seven steps: the rest of the contract, at desktop size ----

await step("tools-view", async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(300);
  expect((await page.locator("#tab-tools").count()) === 1, "no #tab-tools button to show section#tools-view");
  await page.locator("#tab-tools").click();
  await visible("section#tools-view", "section#tools-view after #tab-tools");
  for (const t of ["list_dir", "read_file", "write_file"]) {
    await visible(`section#tools-view li[data-tool="${t}"]`, `li[data-tool=${t}] in section#tools-view`, 5000);
  }
  // The config's MCP server whose command does not exist: listed, not connected.
  await visible('section#tools-view li[data-mcp="missing"]', "li[data-mcp=missing] in section#tools-view", 5000);
  const mcp = await page.locator('section#tools-view li[data-mcp="missing"]').innerText();
  expect(/not connected/i.test(mcp), `li[data-mcp=missing] says ${JSON.stringify(mcp)}, want "not connected"`);
  await shot(`${String(stepNo).padStart(2, "0")}a-tools`);
  await page.locator("#tab-workspace").click();
  await visible("#file-tree [role=treeitem]", "the file tree after #tab-workspace", 5000);
});

await step("editor", async () => {
  const notes = join(workdir, "notes.md");
  await page.locator(`#file-tree [role=treeitem][data-path="${notes}"]`).click();
  await visible("textarea#editor", "textarea#editor after clicking notes.md");
  await waitFor("notes.md in textarea#editor", () => document.querySelector("textarea#editor")?.value.includes("# Notes"));
  expect(await page.locator("textarea#editor").evaluate((e) => e.readOnly), "textarea#editor is editable before button#edit");
  await page.locator("button#edit").click();
  await waitFor("textarea#editor to be editable after button#edit", () => !document.querySelector("textarea#editor")?.readOnly);
  const content = "# Notes\n\nEdited in the browser.\n";
  await page.locator("textarea#editor").fill(content);
  await page.locator("button#save").click();
  const deadline = Date.now() + 5000;
  while (readFileSync(notes, "utf8") !== content && Date.now() < deadline) await page.waitForTimeout(50);
  const got = readFileSync(notes, "utf8");
  expect(got === content, `notes.md holds ${JSON.stringify(got)} after button#save, want ${JSON.stringify(content)}`);
  // A new file through button#new-file (its name through window.prompt).
  const name = "made-in-browser.txt";
  dialogAnswer = name;
  try {
    await page.locator("button#new-file").click();
    await visible(`#file-tree [role=treeitem][data-path="${join(workdir, name)}"]`, `${name} in the tree after button#new-file`, 5000);
  } finally {
    dialogAnswer = null;
  }
  expect(existsSync(join(workdir, name)), `${join(workdir, name)} does not exist after button#new-file`);
});

await step("new-session", async () => {
  await page.locator("button#new-session").click();
  await visible("form#new-session-form", "form#new-session-form after button#new-session");
  const options = await page.locator("select#new-model option").evaluateAll((os) => os.map((o) => o.value));
  const large = options.find((v) => v.endsWith("fake-model-large"));
  expect(large, `select#new-model offers ${JSON.stringify(options)}, no fake-model-large`);
  await page.locator("select#new-model").selectOption(large);
  const skills = page.locator('form#new-session-form input[type=checkbox][value="go"]');
  expect((await skills.count()) === 1, "no checkbox for the skill go in form#new-session-form");
  await skills.check();
  await shot(`${String(stepNo).padStart(2, "0")}a-new-session-form`);
  await page.locator("form#new-session-form [type=submit]").click();
  await waitFor("form#new-session-form to close", () => document.querySelector("form#new-session-form")?.hidden);
  await waitFor("the old conversation to leave #messages", () => !document.querySelector("#messages .msg.user"));
  await send("Hello from a new session");
  await waitFor(
    'the answer "ok"',
    () => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.trim() === "ok" || /\bok\b/.test(e.textContent)),
  );
  await turnEnded();
  await waitFor("two sessions in the sidebar", () => document.querySelectorAll("#sessions [data-testid=session-item]").length === 2);
  const list = await apiGet("/api/sessions");
  const made = list.find((m) => m.title && m.title.includes("Hello from a new session"));
  expect(made, `GET /api/sessions has no session titled "Hello from a new session": ${JSON.stringify(list)}`);
  expect(made.model === "fake-model-large", `the new session's model is ${JSON.stringify(made.model)}, want fake-model-large`);
  expect(JSON.stringify(made.skills) === '["go"]', `the new session's skills are ${JSON.stringify(made.skills)}, want ["go"]`);
});

await step("search-rename", async () => {
  const item = (t) => `#sessions [data-testid=session-item]:has-text("${t}")`;
  await page.locator("input#session-search").fill("work directory");
  await waitFor("the search to keep only the first session", () => document.querySelectorAll("#sessions [data-testid=session-item]").length === 1);
  await visible(item("Please list the work directory"), "the first session among the search results");
  await page.locator("input#session-search").fill("");
  await waitFor("both sessions after clearing the search", () => document.querySelectorAll("#sessions [data-testid=session-item]").length === 2);
  dialogAnswer = "Renamed in the browser";
  const before = dialogs.length;
  try {
    await page.locator(item("Please list the work directory")).hover();
    await page.locator(`${item("Please list the work directory")} button[data-action=rename]`).click();
    await visible(item("Renamed in the browser"), "the renamed session in the sidebar", 5000);
  } finally {
    dialogAnswer = null;
  }
  expect(dialogs.length === before + 1 && dialogs[before].type === "prompt", `rename asked through ${JSON.stringify(dialogs.slice(before))}, want one window.prompt`);
  const list = await apiGet("/api/sessions");
  expect(list.some((m) => m.title === "Renamed in the browser"), `GET /api/sessions has no session titled "Renamed in the browser"`);
});

await step("delete", async () => {
  const sel = '#sessions [data-testid=session-item]:has-text("Renamed in the browser")';
  const id = await page.locator(sel).getAttribute("data-session-id");
  const before = dialogs.length;
  await page.locator(sel).hover();
  await page.locator(`${sel} button[data-action=delete]`).click();
  await waitFor("the deleted session to leave the sidebar", () => document.querySelectorAll("#sessions [data-testid=session-item]").length === 1);
  expect(dialogs.length === before + 1 && dialogs[before].type === "confirm", `delete asked through ${JSON.stringify(dialogs.slice(before))}, want one window.confirm`);
  const list = await apiGet("/api/sessions");
  expect(!list.some((m) => m.id === id), `GET /api/sessions still lists the deleted session ${id}`);
});

await page.waitForTimeout(200);
if (problems.length > reported) {
  results.push({ step: "after the last step", ok: false, ms: 0 });
  console.error(`FAIL after the last step: the page reported:\n  ${problems.slice(reported).join("\n  ")}`);
}
await browser.close();
console.log(JSON.stringify({ results, dialogs }));
const failed = results.filter((r) => !r.ok);
if (failed.length) {
  log(`e2e: ${failed.length} of ${results.length} steps failed: ${failed.map((r) => r.step).join(", ")}`);
  process.exit(1);
}
log(`e2e: all ${results.length} steps ok; screenshots in ${outdir}`);
