// The conversation steps of e2e.mjs: load, a tool call, the working state,
// permission questions with diffs (a new file, an edit), and stop. The
// prompts carry markers ([e2e:...]) the fake model of
// cmd/openheim/web_test.go answers by: keep the two in step.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  t, log, expect, dialogs, shot, stepPrefix, texts, waitFor, visible, send, turnEnded, noOverflow,
} from "./harness.mjs";

const PROMPT_LIST = "Please list the work directory [e2e:list]";
const PROMPT_SLOW = "Take your time with this one [e2e:slow]";
const PROMPT_WRITE = "Write a greeting file [e2e:write]";
const PROMPT_EDIT = "Rename the helpers in long.go [e2e:edit]";
const PROMPT_STOP = "Think about it for a long time [e2e:stop]";
export const LIST_ANSWER = "Listed the work directory.";
export const CODE_LINE = "func main() {}";
const WRITE_FILE = "greeting.txt";
const WRITE_CONTENT = "hello from the browser\n";
const SLOW_ANSWER = "Here is the slow answer.";
const STOP_TEXT = "Thinking it over";
export { PROMPT_LIST, PROMPT_WRITE };

const lastToolCard = "#messages [data-testid=tool-card] >> nth=-1";

// The states div#working went through since the last reset (working.js),
// recorded in the page so none is missed between two polls.
async function recordWorking() {
  await t.page.evaluate(() => {
    const el = document.querySelector("#working");
    window.__working = [];
    const note = () => {
      const s = `${el.dataset.state}:${el.querySelector(".working-label").textContent}`;
      if (window.__working[window.__working.length - 1] !== s) window.__working.push(s);
    };
    window.__workingObserver?.disconnect();
    window.__workingObserver = new MutationObserver(note);
    window.__workingObserver.observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
  });
}
const workingStates = () => t.page.evaluate(() => window.__working);

// The working bar is idle: no label, no height, nothing announced.
async function workingIdle(when) {
  await waitFor(`div#working to be idle ${when}`, () => document.querySelector("#working")?.dataset.state === "idle", undefined, 5000);
  const w = await t.page.locator("#working").evaluate((e) => ({ text: e.textContent.trim(), h: e.getBoundingClientRect().height }));
  expect(w.text === "" && w.h === 0, `div#working ${when}: ${JSON.stringify(w)}, want empty and 0px high`);
}

export async function load() {
  const page = t.page;
  const resp = await page.goto(t.url, { waitUntil: "load" });
  expect(resp && resp.ok(), `GET ${t.url}: ${resp && resp.status()}`);
  await waitFor("body[data-ready=true]", () => document.body?.dataset.ready === "true");
  // The page took the token from the address and hid it again.
  const seen = await page.evaluate(() => ({ href: location.href, kept: sessionStorage.getItem("openheim.token"), asked: document.querySelector("dialog#token")?.open }));
  expect(seen.kept === t.token, `sessionStorage holds ${JSON.stringify(seen.kept)}, not the token of the address`);
  expect(!seen.href.includes(t.token) && !seen.href.includes("token="), `the address bar still shows the token: ${seen.href}`);
  expect(!seen.asked, "the page asked for a token it was given");
  const anon = await fetch(new URL("/api/sessions", t.url));
  expect(anon.status === 401, `GET /api/sessions without the token: ${anon.status}, want 401`);
  const status = await page.locator("#conn-status").innerText();
  expect(/connected/i.test(status) && !/reconnect|offline/i.test(status), `#conn-status says ${JSON.stringify(status)}, want connected`);
  for (const sel of ["#sessions", "#messages", "textarea#prompt", "button#send", "button#stop", "#file-tree"]) {
    expect((await page.locator(sel).count()) === 1, `no ${sel} in the page`);
  }
  // The working bar is a live region from the start (so changes are announced), idle.
  const w = await page.locator("#working").evaluate((e) => ({ role: e.getAttribute("role"), live: e.getAttribute("aria-live") }));
  expect(w.role === "status" && w.live === "polite", `div#working is ${JSON.stringify(w)}, want role=status aria-live=polite`);
  await workingIdle("before any prompt");
}

export async function promptToolCard() {
  const page = t.page;
  await recordWorking();
  await send(PROMPT_LIST);
  await waitFor(
    "a tool card with data-status=completed",
    () => document.querySelector('#messages [data-testid=tool-card][data-status="completed"]'),
  );
  await waitFor(
    `an assistant message with ${JSON.stringify(LIST_ANSWER)} and a pre code block`,
    ([s, code]) =>
      [...document.querySelectorAll("#messages .msg.assistant")].some(
        (e) => e.textContent.includes(s) && [...e.querySelectorAll("pre code")].some((c) => c.textContent.includes(code)),
      ),
    [LIST_ANSWER, CODE_LINE],
  );
  await turnEnded();
  const card = page.locator("#messages [data-testid=tool-card]").first();
  const kind = await card.getAttribute("data-kind");
  expect(kind === "read", `the list_dir tool card has data-kind=${JSON.stringify(kind)}, want "read"`);
  expect((await page.locator("#messages .msg.assistant button.copy").count()) > 0, "the assistant's code block has no button.copy");
  expect((await page.locator("#messages details.thinking").count()) > 0, "the model's thinking is not shown as details.thinking");
  // Markdown: **notes.md** is bold, not literal asterisks.
  const md = await page.evaluate(() => [...document.querySelectorAll("#messages .msg.assistant")].map((e) => e.innerHTML).join("\n"));
  expect(!md.includes("**notes.md**") && /<(strong|b)>notes\.md<\/(strong|b)>/.test(md), "**notes.md** is not rendered bold");
  // The answer's token usage against the provider's context_window (web_test.go: 100000).
  await waitFor(
    'span#usage to say "context: N / 100000 tokens"',
    () => /^context: [1-9]\d* \/ 100000 tokens$/.test(document.querySelector("span#usage")?.textContent.trim() || ""),
    undefined,
    5000,
  );
  // The working bar: waiting for the model, then running the tool, then
  // waiting again (the model reads the result), thinking, writing, idle.
  await workingIdle("after the turn");
  const states = await workingStates();
  log(`div#working went through: ${JSON.stringify(states)}`);
  const at = (s) => states.findIndex((x) => x.startsWith(s));
  expect(at("waiting:Waiting for the model") === 0, `div#working did not start at "waiting": ${JSON.stringify(states)}`);
  expect(at("tool:Running list_dir") > 0, `div#working never said "Running list_dir…" during the tool: ${JSON.stringify(states)}`);
  expect(at("streaming:") > at("tool:"), `div#working never said it was writing after the tool: ${JSON.stringify(states)}`);
  expect(states[states.length - 1] === "idle:", `div#working did not end idle: ${JSON.stringify(states)}`);
}

export async function working() {
  const page = t.page;
  await recordWorking();
  await send(PROMPT_SLOW);
  // The fake model waits 2.5 s before its first token: the bar says so.
  await waitFor("div#working[data-state=waiting]", () => document.querySelector("#working")?.dataset.state === "waiting", undefined, 2000);
  const w = await page.locator("#working").evaluate((e) => ({ text: e.textContent.trim(), h: e.getBoundingClientRect().height, spin: getComputedStyle(e.querySelector(".working-spinner")).display }));
  expect(/^Waiting for the model…/.test(w.text) && w.h > 10 && w.spin !== "none", `div#working while waiting: ${JSON.stringify(w)}`);
  expect(!(await page.locator("#messages .msg.assistant").last().textContent()).includes(SLOW_ANSWER), "the answer came before the bar was seen");
  await shot(`${stepPrefix()}a-working`);
  await waitFor("div#working to show the seconds waited", () => /\d+ s$/.test(document.querySelector("#working .working-time")?.textContent || ""), undefined, 3000);
  await waitFor(
    `the slow answer ${JSON.stringify(SLOW_ANSWER)}`,
    (s) => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.includes(s)),
    SLOW_ANSWER,
  );
  await turnEnded();
  await workingIdle("after the slow answer");
  const states = await workingStates();
  expect(states[0].startsWith("waiting:") && states.some((s) => s.startsWith("streaming:")), `div#working went through ${JSON.stringify(states)}`);
}

// The diff in dialog#permission (sel: the dialog's diff); returns its rows.
async function dialogDiff(what) {
  await visible("dialog#permission[open] [data-testid=diff]", `a diff in the permission dialog (${what})`);
  const hidden = await t.page.locator("#permission-input").evaluate((e) => e.hidden || getComputedStyle(e).display === "none");
  expect(hidden, `the permission dialog shows the raw arguments beside the diff: ${await texts("#permission-input")}`);
  return t.page.locator("dialog#permission [data-testid=diff] .dl").evaluateAll((ls) => ls.map((l) => ({ cls: l.className, text: l.querySelector(".tx")?.textContent ?? l.textContent })));
}

export async function permission() {
  const page = t.page;
  const file = join(t.workdir, WRITE_FILE);
  expect(!existsSync(file), `${file} exists before the write`);
  await send(PROMPT_WRITE);
  await visible("dialog#permission[open]", "the permission dialog (dialog#permission[open])");
  const rows = await dialogDiff("write_file");
  const isNew = await page.locator("dialog#permission [data-testid=diff]").getAttribute("data-new");
  expect(isNew === "true", `the write_file diff is not marked as a new file (data-new=${isNew})`);
  expect(rows.length === 1 && rows[0].cls === "dl add" && rows[0].text === WRITE_CONTENT.trim(), `the new file's diff rows: ${JSON.stringify(rows)}`);
  expect(/new file/.test(await page.locator("dialog#permission .diff-head").innerText()), "the diff's head does not say new file");
  await waitFor("div#working to wait for the answer", () => /^Waiting for your answer: write_file/.test(document.querySelector("#working")?.textContent.trim() || ""), undefined, 3000);
  await shot(`${stepPrefix()}a-permission-dialog`);
  const kinds = await page.locator("dialog#permission button[data-option-kind]").evaluateAll((bs) => bs.map((b) => b.dataset.optionKind));
  for (const k of ["allow_once", "allow_always", "reject_once"]) {
    expect(kinds.includes(k), `the permission dialog has no ${k} button (it has ${JSON.stringify(kinds)})`);
  }
  await page.locator("dialog#permission button[data-option-kind=allow_once]").click();
  await waitFor("the permission dialog to close", () => !document.querySelector("dialog#permission")?.open);
  await waitFor("the write_file tool card to complete", () => {
    const cards = document.querySelectorAll("#messages [data-testid=tool-card]");
    return cards.length >= 2 && cards[cards.length - 1].dataset.status === "completed";
  });
  const kind = await page.locator(lastToolCard).getAttribute("data-kind");
  expect(kind === "edit", `the write_file tool card has data-kind=${JSON.stringify(kind)}, want "edit"`);
  await cardShowsDiff(WRITE_CONTENT.trim());
  await waitFor(
    `the answer "Wrote ${WRITE_FILE}."`,
    (s) => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.includes(s)),
    `Wrote ${WRITE_FILE}.`,
  );
  await turnEnded();
  expect(existsSync(file), `${file} does not exist after allow_once`);
  const got = readFileSync(file, "utf8");
  expect(got === WRITE_CONTENT, `${file} holds ${JSON.stringify(got)}, want ${JSON.stringify(WRITE_CONTENT)}`);
}

// The last tool card shows the diff (with a line holding text), not its raw arguments.
async function cardShowsDiff(text) {
  await waitFor("a diff in the last tool card", () => {
    const card = [...document.querySelectorAll("#messages [data-testid=tool-card]")].pop();
    const d = card?.querySelector(".tool-diffs [data-testid=diff]");
    return d && d.getBoundingClientRect().height > 0;
  });
  const c = await t.page.locator(lastToolCard).evaluate((e) => ({
    lines: [...e.querySelectorAll(".tool-diffs .dl .tx")].map((x) => x.textContent),
    input: !e.querySelector(".tool-input").hidden,
  }));
  expect(c.lines.includes(text), `the tool card's diff lacks ${JSON.stringify(text)}: ${JSON.stringify(c.lines.slice(0, 8))}`);
  expect(!c.input, "the tool card shows its raw arguments beside the diff");
}

export async function editDiff() {
  const page = t.page;
  const file = join(t.workdir, "src", "long.go");
  const before = readFileSync(file, "utf8");
  await send(PROMPT_EDIT);
  await visible("dialog#permission[open]", "the permission dialog for edit_file");
  let rows = await dialogDiff("edit_file");
  const diff = page.locator("dialog#permission [data-testid=diff]");
  expect((await diff.getAttribute("data-new")) === "false", "the edit's diff is marked as a new file");
  // Bounded: the first lines, a hunk header with its line numbers, context, and a button for the rest.
  expect(rows.length === 24, `the collapsed diff shows ${rows.length} lines, want 24`);
  expect(rows[0].text === "@@ -31,22 +31,22 @@", `the hunk header is ${JSON.stringify(rows[0].text)}, want @@ -31,22 +31,22 @@`);
  expect(rows[1].cls === "dl ctx" && rows[4].cls === "dl del", `context then removals: ${JSON.stringify(rows.slice(0, 6))}`);
  const more = diff.locator("button.diff-more");
  expect((await more.innerText()) === "Show all 39 lines", `the diff's button says ${JSON.stringify(await more.innerText())}`);
  await shot(`${stepPrefix()}a-edit-dialog`);
  await more.click();
  rows = await dialogDiff("edit_file, all lines");
  const count = (c) => rows.filter((r) => r.cls === `dl ${c}`).length;
  expect(rows.length === 39 && count("del") === 16 && count("add") === 16 && count("ctx") === 6,
    `the whole diff: ${rows.length} rows, ${count("del")} removed, ${count("add")} added, ${count("ctx")} context`);
  expect((await more.getAttribute("aria-expanded")) === "true", "button.diff-more is not aria-expanded after the click");
  expect(rows.some((r) => r.cls === "dl add" && r.text.includes("func renamed30")), "no added line renames func helper30");
  await shot(`${stepPrefix()}b-edit-dialog-all`);
  // A phone: the dialog and its diff fit.
  await page.setViewportSize({ width: 360, height: 740 });
  await page.waitForTimeout(300);
  await noOverflow("with the diff dialog open at 360px");
  await shot(`${stepPrefix()}c-edit-dialog-narrow`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator("dialog#permission button[data-option-kind=allow_once]").click();
  await waitFor("the edit_file tool card to complete", () => [...document.querySelectorAll("#messages [data-testid=tool-card]")].pop()?.dataset.status === "completed");
  // The card shows fewer lines than the dialog, and the rest on demand.
  await cardShowsDiff("func helper30() int { return 30 }");
  const card = page.locator(lastToolCard);
  expect((await card.locator(".tool-diffs .dl").count()) === 12, `the card's diff shows ${await card.locator(".tool-diffs .dl").count()} lines, want 12`);
  await card.locator(".tool-diffs button.diff-more").click();
  await cardShowsDiff("func renamed30() int { return 30 }");
  expect((await card.locator(".tool-diffs .dl").count()) === 39, "the card's diff does not show all 39 lines after Show all");
  await turnEnded();
  await page.locator(lastToolCard).scrollIntoViewIfNeeded(); // for the step's screenshot
  const after = readFileSync(file, "utf8");
  expect(after !== before && after.includes("func renamed30() int { return 30 }"), `src/long.go was not edited: ${JSON.stringify(after.slice(0, 200))}`);
}

export async function stop() {
  const page = t.page;
  const errorsBefore = await page.locator("#messages .msg.error").count();
  const dialogsBefore = dialogs.length;
  await send(PROMPT_STOP);
  await waitFor(
    `the streamed ${JSON.stringify(STOP_TEXT)}`,
    (s) => [...document.querySelectorAll("#messages .msg.assistant")].some((e) => e.textContent.includes(s)),
    STOP_TEXT,
  );
  await waitFor("button#stop to be enabled while the turn runs", () => document.querySelector("button#stop")?.disabled === false);
  await shot(`${stepPrefix()}a-streaming`);
  await page.locator("button#stop").click();
  await turnEnded(10_000);
  await waitFor("the conversation to show the turn was cancelled", () => /cancel/i.test(document.querySelector("#messages")?.textContent || ""), undefined, 5000);
  const errorsAfter = await page.locator("#messages .msg.error").count();
  expect(errorsAfter === errorsBefore, `stopping added ${errorsAfter - errorsBefore} div.msg.error: ${await texts("#messages .msg.error >> nth=-1").catch(() => "")}`);
  expect(dialogs.length === dialogsBefore, `stopping opened a dialog: ${JSON.stringify(dialogs.slice(dialogsBefore))}`);
  expect(!(await page.locator("dialog#permission").evaluate((d) => d.open)), "the permission dialog is open");
  await waitFor("button#send to be enabled after the stop", () => !document.querySelector("button#send")?.disabled);
  await workingIdle("after the stop");
}
