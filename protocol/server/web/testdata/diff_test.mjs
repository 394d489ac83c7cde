// Checks static/diff.js's line diff under node (diff_test.go runs it):
// on thousands of random pairs the operations rebuild both texts, number
// their lines right and are minimal (as many unchanged lines as the longest
// common subsequence); hunks carry unified-diff headers; a large input
// stays fast. Prints "ok" or throws.
import { diffLines, hunks } from "../static/diff.js";

function lcs(a, b) {
  const dp = Array.from({ length: a.length + 1 }, () => new Int32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  return dp[0][0];
}
let seed = 1;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const text = (lines) => (lines.length ? `${lines.join("\n")}\n` : "");
const check = (ok, msg) => {
  if (!ok) throw new Error(msg);
};

for (let n = 0; n < 3000; n++) {
  const gen = () => Array.from({ length: Math.floor(rnd() * 14) }, () => "abcd"[Math.floor(rnd() * 4)]);
  const a = gen();
  const b = gen();
  const ops = diffLines(rnd() < 0.1 && !a.length ? null : text(a), text(b));
  const got = (skip) => ops.filter((o) => o.op !== skip).map((o) => o.text);
  check(got("+").join() === a.join() && got("-").join() === b.join(), `rebuild ${JSON.stringify({ a, b, ops })}`);
  check(ops.filter((o) => o.op === " ").length === lcs(a, b), `not minimal ${JSON.stringify({ a, b })}`);
  for (const o of ops) {
    check(o.op === "+" || o.text === a[o.a - 1], `old line number of ${JSON.stringify(o)}`);
    check(o.op === "-" || o.text === b[o.b - 1], `new line number of ${JSON.stringify(o)}`);
  }
  // Each run of changes reads as its removals, then its additions.
  const s = ops.map((o) => o.op).join("");
  check(!/\+-/.test(s), `an addition before a removal in one run: ${s}`);
}

const old = text(Array.from({ length: 40 }, (_, i) => `line ${i + 1}`));
const next = old.replace("line 10\n", "line ten\n").replace("line 30\n", "");
const hs = hunks(diffLines(old, next)).map((h) => h.header);
check(JSON.stringify(hs) === JSON.stringify(["@@ -7,7 +7,7 @@", "@@ -27,7 +27,6 @@"]), `hunks ${JSON.stringify(hs)}`);
check(hunks(diffLines(null, "a\nb\n"))[0].header === "@@ -0,0 +1,2 @@", "a new file's hunk");
check(hunks(diffLines("a\nb\n", "a\nb\n")).length === 0, "no change, no hunk");
check(diffLines("a\r\nb", "a\r\nc").filter((o) => o.op === " ").length === 1, "a last line without a newline");

// 20,000 lines, one in 50 changed; and two unrelated 20,000-line files.
const big = Array.from({ length: 20000 }, (_, i) => `l${i}`);
let t0 = Date.now();
const ops = diffLines(text(big), text(big.map((l, i) => (i % 50 ? l : `${l}x`))));
check(ops.filter((o) => o.op !== " ").length === 800, `scattered edits: ${ops.filter((o) => o.op !== " ").length} changed lines, want 800`);
const scattered = Date.now() - t0;
t0 = Date.now();
diffLines(text(big), text(big.map((l) => `m${l}`)));
const disjoint = Date.now() - t0;
check(scattered < 2000 && disjoint < 2000, `slow: ${scattered} ms, ${disjoint} ms`);
console.log(`ok (20,000 lines: ${scattered} ms with 400 edits, ${disjoint} ms all different)`);
