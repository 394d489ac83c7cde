// The harness of the web client's browser tests: a headless Chromium
// (Debian's /usr/bin/chromium, through playwright-core) on one page, steps
// that save a screenshot each (NN-step.png, NN-step-FAILED.png), and the
// waits and checks the steps share. Console errors and uncaught page
// errors fail the step they happen in. One harness per process.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

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
export const STEP_MS = 20_000; // the default wait of a step's expectations
// OPENHEIM_E2E_KEEP_GOING=1 runs every step even after one failed (for
// debugging the client; later steps may fail for the earlier one's sake).
const KEEP_GOING = !!process.env.OPENHEIM_E2E_KEEP_GOING;

const started = Date.now();
export const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

export class StepError extends Error {}
export const fail = (msg) => {
  throw new StepError(msg);
};
export const expect = (ok, msg) => {
  if (!ok) fail(msg);
};

// Problems the page reports: any of them fails the step it happens in.
const problems = [];
export const dialogs = []; // every window.alert/confirm/prompt, accepted
const answers = { prompt: null }; // the text a window.prompt is answered with
const results = [];
let reported = 0; // problems already charged to a step
let stepNo = 0;

/** The shared state: page, browser, url, token, outdir; set by start(). */
export const t = { page: null, browser: null, url: "", token: "", outdir: "" };

/**
 * Launches Chromium and opens a page for url (the address serve printed,
 * with its #token=), screenshots going to outdir.
 */
export async function start({ url, outdir, viewport = { width: 1280, height: 800 } }) {
  mkdirSync(outdir, { recursive: true });
  t.url = url;
  t.outdir = outdir;
  t.token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  if (!t.token) {
    console.error(`${url} carries no #token=`);
    process.exit(2);
  }
  t.browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 60_000 });
  const context = await t.browser.newContext({ viewport });
  context.setDefaultTimeout(STEP_MS);
  t.page = await context.newPage();
  const page = t.page;
  page.on("console", (m) => {
    if (m.type() === "error") {
      const loc = m.location();
      problems.push(`console error: ${m.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ""}`);
    }
  });
  // The token never rides in a WebSocket's address (proxies log those).
  page.on("websocket", (ws) => {
    if (t.token && (ws.url().includes(t.token) || ws.url().includes("token="))) problems.push(`a WebSocket address carries the token: ${ws.url()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.stack || e.message || e}`));
  page.on("crash", () => problems.push("the page crashed"));
  page.on("dialog", async (d) => {
    dialogs.push({ type: d.type(), message: d.message() });
    log(`dialog ${d.type()}: ${JSON.stringify(d.message())}`);
    if (d.type() === "prompt") await d.accept(answers.prompt ?? d.defaultValue());
    else await d.accept();
  });
  return page;
}

/** Runs fn while window.prompt is answered with text. */
export async function answeringPrompt(text, fn) {
  answers.prompt = text;
  try {
    return await fn();
  } finally {
    answers.prompt = null;
  }
}

/** GET an API path with the token; the decoded JSON. */
export const apiGet = async (path) => (await fetch(new URL(path, t.url), { headers: { Authorization: `Bearer ${t.token}` } })).json();

/** The current step's screenshot prefix ("03"): extra shots are NNa-..., NNb-... */
export const stepPrefix = () => String(stepNo).padStart(2, "0");

export async function step(name, fn) {
  stepNo++;
  const id = `${stepPrefix()}-${name}`;
  const t0 = Date.now();
  const before = reported; // also what came in since the last step
  try {
    await fn(id);
    await t.page.waitForTimeout(100); // late console errors of this step
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
    console.error(`  screenshot: ${join(t.outdir, `${id}-FAILED.png`)}`);
    console.error(`  #messages: ${await texts("#messages").catch(() => "?")}`);
    results.push({ step: id, ok: false, ms: Date.now() - t0 });
    if (KEEP_GOING) return; // debugging: see every step's outcome
    console.error(JSON.stringify({ results, failed: id, dialogs }));
    await t.browser.close().catch(() => {});
    process.exit(1);
  }
}

/** Ends the run: fails on late page problems, prints the results, exits 1 on a failed step. */
export async function finish(extra = {}) {
  await t.page.waitForTimeout(200);
  if (problems.length > reported) {
    results.push({ step: "after the last step", ok: false, ms: 0 });
    console.error(`FAIL after the last step: the page reported:\n  ${problems.slice(reported).join("\n  ")}`);
  }
  await t.browser.close();
  console.log(JSON.stringify({ results, dialogs, ...extra }));
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    log(`${failed.length} of ${results.length} steps failed: ${failed.map((r) => r.step).join(", ")}`);
    process.exit(1);
  }
  log(`all ${results.length} steps ok; screenshots in ${t.outdir}`);
}

export async function shot(name) {
  await t.page.screenshot({ path: join(t.outdir, `${name}.png`), fullPage: true, timeout: 10_000 });
}

// The visible text of a selector's first match, squeezed, for messages.
export async function texts(sel) {
  const s = await t.page.locator(sel).first().innerText({ timeout: 1000 });
  return JSON.stringify(s.replace(/\s+/g, " ").slice(0, 600));
}

// waitFor waits until fn (run in the page) returns a truthy value.
export async function waitFor(what, fn, arg, timeout = STEP_MS) {
  try {
    return await t.page.waitForFunction(fn, arg, { timeout, polling: 50 });
  } catch {
    fail(`timed out after ${timeout} ms waiting for ${what}`);
  }
}

export async function visible(sel, what, timeout = STEP_MS) {
  try {
    await t.page.locator(sel).first().waitFor({ state: "visible", timeout });
  } catch {
    fail(`timed out after ${timeout} ms waiting for ${what || sel} to be visible (${await t.page.locator(sel).count()} in the page)`);
  }
}

// send types a prompt in #prompt and clicks #send.
export async function send(text) {
  const page = t.page;
  await visible("textarea#prompt");
  await page.locator("textarea#prompt").fill(text);
  await waitFor("button#send to be enabled", () => !document.querySelector("button#send")?.disabled);
  await page.locator("button#send").click();
  // The prompt shows as a user message.
  await waitFor(
    `a div.msg.user with ${JSON.stringify(text)}`,
    (s) => [...document.querySelectorAll("#messages .msg.user")].some((e) => e.textContent.includes(s)),
    text,
  );
}

// The turn has ended: #stop is disabled again.
export async function turnEnded(timeout = STEP_MS) {
  await waitFor("the turn to end (button#stop disabled)", () => document.querySelector("button#stop")?.disabled === true, undefined, timeout);
}

// noOverflow fails when the page scrolls sideways, naming the elements
// that stick out past the viewport's right edge.
export async function noOverflow(when) {
  const r = await t.page.evaluate(() => {
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
    return { scroll: document.documentElement.scrollWidth, vw, out: out.slice(0, 8) };
  });
  expect(
    r.scroll <= r.vw,
    `the page is ${r.scroll}px wide ${when} (horizontal overflow); sticking out: ${r.out.join("; ") || "(nothing found)"}`,
  );
}
