// The other steps of e2e.mjs: the live file tree, replay after a reload, a
// phone-sized viewport, the tools view, the editor, and the sessions
// sidebar (a new session, search with its snippet, rename, delete).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  t, fail, expect, dialogs, answeringPrompt, apiGet, shot, stepPrefix, waitFor, visible, send, turnEnded, noOverflow,
} from "./harness.mjs";
import { PROMPT_LIST, LIST_ANSWER, CODE_LINE } from "./steps-chat.mjs";

const ITEMS = "#sessions [data-testid=session-item]";

export async function fileTreeLive() {
  const page = t.page;
  const name = `made-on-disk-${Date.now()}.txt`;
  const abs = join(t.workdir, name);
  await visible(`#file-tree [role=treeitem][data-path="${join(t.workdir, "notes.md")}"]`, "notes.md in ul#file-tree");
  writeFileSync(abs, "made by e2e.mjs\n");
  try {
    await page.locator(`#file-tree [role=treeitem][data-path="${abs}"]`).waitFor({ state: "visible", timeout: 5000 });
  } catch {
    const paths = await page.locator("#file-tree [role=treeitem]").evaluateAll((ls) => ls.map((l) => l.dataset.path));
    fail(`${abs} did not show in ul#file-tree within 5 s; the tree has ${JSON.stringify(paths)}`);
  }
}

export async function replay() {
  const page = t.page;
  await page.reload({ waitUntil: "load" });
  await waitFor("body[data-ready=true] after the reload", () => document.body?.dataset.ready === "true");
  const items = page.locator(ITEMS);
  await visible(ITEMS, "a session in the sidebar");
  expect((await items.count()) === 1, `the sidebar lists ${await items.count()} sessions, want 1`);
  const groups = await page.locator("#sessions [data-testid=session-group] h3").allInnerTexts();
  expect(groups.length === 1 && /today/i.test(groups[0]), `the sidebar's date groups: ${JSON.stringify(groups)}, want Today`);
  const id = await items.first().getAttribute("data-session-id");
  expect(/^[0-9a-f-]{36}$/.test(id || ""), `data-session-id=${JSON.stringify(id)}`);
  await items.first().click();
  await waitFor(
    "the replayed user message of the first prompt",
    (s) => [...document.querySelectorAll("#messages .msg.user")].some((e) => e.textContent.includes(s)),
    PROMPT_LIST,
  );
  await waitFor("the replayed tool cards, completed", () => document.querySelectorAll('#messages [data-testid=tool-card][data-status="completed"]').length >= 3);
  await waitFor(
    "the replayed answer with its code block",
    ([s, code]) =>
      [...document.querySelectorAll("#messages .msg.assistant")].some(
        (e) => e.textContent.includes(s) && [...e.querySelectorAll("pre code")].some((c) => c.textContent.includes(code)),
      ),
    [LIST_ANSWER, CODE_LINE],
  );
  // One copy of the history, not the replay on top of what was shown.
  const users = await page.locator("#messages .msg.user").evaluateAll((es) => es.map((e) => e.textContent));
  const n = users.filter((s) => s.includes(PROMPT_LIST)).length;
  expect(n === 1, `the first prompt shows ${n} times after the replay`);
}

export async function narrow() {
  const page = t.page;
  const p = stepPrefix();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.waitForTimeout(300);
  await shot(`${p}a-narrow-first-look`);
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
  await visible(ITEMS, "the sessions list after button#toggle-sessions", 3000);
  await shot(`${p}b-narrow-sessions`);
  await page.locator("button#toggle-sessions").click();
  await page.locator("button#toggle-workspace").click();
  await visible("#file-tree [role=treeitem]", "the file tree after button#toggle-workspace", 3000);
  await shot(`${p}c-narrow-workspace`);
  await page.locator("button#toggle-workspace").click();
  await visible("textarea#prompt", "textarea#prompt after closing the panels", 3000);
  await noOverflow("after the toggles");
}

export async function toolsView() {
  const page = t.page;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForTimeout(300);
  expect((await page.locator("#tab-tools").count()) === 1, "no #tab-tools button to show section#tools-view");
  await page.locator("#tab-tools").click();
  await visible("section#tools-view", "section#tools-view after #tab-tools");
  for (const name of ["list_dir", "read_file", "write_file"]) {
    await visible(`section#tools-view li[data-tool="${name}"]`, `li[data-tool=${name}] in section#tools-view`, 5000);
  }
  // The config's MCP server whose command does not exist: listed, not connected.
  await visible('section#tools-view li[data-mcp="missing"]', "li[data-mcp=missing] in section#tools-view", 5000);
  const mcp = await page.locator('section#tools-view li[data-mcp="missing"]').innerText();
  expect(/not connected/i.test(mcp), `li[data-mcp=missing] says ${JSON.stringify(mcp)}, want "not connected"`);
  await shot(`${stepPrefix()}a-tools`);
  await page.locator("#tab-workspace").click();
  await visible("#file-tree [role=treeitem]", "the file tree after #tab-workspace", 5000);
}

export async function editor() {
  const page = t.page;
  const notes = join(t.workdir, "notes.md");
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
  await answeringPrompt(name, async () => {
    await page.locator("button#new-file").click();
    await visible(`#file-tree [role=treeitem][data-path="${join(t.workdir, name)}"]`, `${name} in the tree after button#new-file`, 5000);
  });
  expect(existsSync(join(t.workdir, name)), `${join(t.workdir, name)} does not exist after button#new-file`);
}

export async function newSession() {
  const page = t.page;
  await page.locator("button#new-session").click();
  await visible("form#new-session-form", "form#new-session-form after button#new-session");
  const options = await page.locator("select#new-model option").evaluateAll((os) => os.map((o) => o.value));
  const large = options.find((v) => v.endsWith("fake-model-large"));
  expect(large, `select#new-model offers ${JSON.stringify(options)}, no fake-model-large`);
  await page.locator("select#new-model").selectOption(large);
  const skills = page.locator('form#new-session-form input[type=checkbox][value="go"]');
  expect((await skills.count()) === 1, "no checkbox for the skill go in form#new-session-form");
  await skills.check();
  await shot(`${stepPrefix()}a-new-session-form`);
  await page.locator("form#new-session-form [type=submit]").click();
  await waitFor("form#new-session-form to close", () => document.querySelector("form#new-session-form")?.hidden);
  await waitFor("the old conversation to leave #messages", () => !document.querySelector("#messages .msg.user"));
  await send("Hello from a new session");
  await waitFor('the answer "ok"', () => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => /\bok\b/.test(e.textContent)));
  await turnEnded();
  await waitFor("two sessions in the sidebar", (sel) => document.querySelectorAll(sel).length === 2, ITEMS);
  const list = await apiGet("/api/sessions");
  const made = list.find((m) => m.title && m.title.includes("Hello from a new session"));
  expect(made, `GET /api/sessions has no session titled "Hello from a new session": ${JSON.stringify(list)}`);
  expect(made.model === "fake-model-large", `the new session's model is ${JSON.stringify(made.model)}, want fake-model-large`);
  expect(JSON.stringify(made.skills) === '["go"]', `the new session's skills are ${JSON.stringify(made.skills)}, want ["go"]`);
}

export async function searchRename() {
  const page = t.page;
  const item = (s) => `${ITEMS}:has-text("${s}")`;
  await page.locator("input#session-search").fill("work directory");
  await waitFor("the search to keep only the first session", (sel) => document.querySelectorAll(sel).length === 1, ITEMS);
  await visible(item("Please list the work directory"), "the first session among the search results");
  // A word only a later message holds: the result shows that message, the word marked.
  await page.locator("input#session-search").fill("greeting");
  await visible(`${ITEMS} [data-testid=session-snippet]`, "the snippet of the search result");
  const snip = await page.locator(`${ITEMS} [data-testid=session-snippet]`).evaluate((e) => ({ text: e.textContent, marks: [...e.querySelectorAll("mark")].map((m) => m.textContent) }));
  expect(/Write a greeting file/.test(snip.text) && snip.marks.includes("greeting"), `the snippet: ${JSON.stringify(snip)}`);
  await shot(`${stepPrefix()}a-search-snippet`);
  await page.locator("input#session-search").fill("");
  await waitFor("both sessions after clearing the search", (sel) => document.querySelectorAll(sel).length === 2, ITEMS);
  const before = dialogs.length;
  await answeringPrompt("Renamed in the browser", async () => {
    await page.locator(item("Please list the work directory")).hover();
    await page.locator(`${item("Please list the work directory")} button[data-action=rename]`).click();
    await visible(item("Renamed in the browser"), "the renamed session in the sidebar", 5000);
  });
  expect(dialogs.length === before + 1 && dialogs[before].type === "prompt", `rename asked through ${JSON.stringify(dialogs.slice(before))}, want one window.prompt`);
  const list = await apiGet("/api/sessions");
  expect(list.some((m) => m.title === "Renamed in the browser"), `GET /api/sessions has no session titled "Renamed in the browser"`);
}

export async function remove() {
  const page = t.page;
  const sel = `${ITEMS}:has-text("Renamed in the browser")`;
  const id = await page.locator(sel).getAttribute("data-session-id");
  const before = dialogs.length;
  await page.locator(sel).hover();
  await page.locator(`${sel} button[data-action=delete]`).click();
  await waitFor("the deleted session to leave the sidebar", (s) => document.querySelectorAll(s).length === 1, ITEMS);
  expect(dialogs.length === before + 1 && dialogs[before].type === "confirm", `delete asked through ${JSON.stringify(dialogs.slice(before))}, want one window.confirm`);
  const list = await apiGet("/api/sessions");
  expect(!list.some((m) => m.id === id), `GET /api/sessions still lists the deleted session ${id}`);
}
