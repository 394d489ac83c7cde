// Unified diffs of ACP diff content ({type:"diff", path, oldText, newText};
// oldText null or absent for a new file), for tool cards and the
// permission dialog: a line diff (Myers) cut into hunks with context,
// coloured, bounded to a few lines with a button to show all.

import { h } from './util.js';

const CONTEXT = 3; // unchanged lines around a change
const SHOWN = 24; // lines shown before "Show all" (by default)

function lines(text) {
  if (text === null || text === undefined || text === '') return [];
  const l = String(text).split('\n');
  if (l[l.length - 1] === '') l.pop(); // the final newline ends the last line
  return l;
}

/**
 * The line operations turning oldText into newText, in order:
 * {op: ' ' | '-' | '+', text, a (old line number) , b (new line number)}.
 */
export function diffLines(oldText, newText) {
  const a = lines(oldText);
  const b = lines(newText);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  // Myers costs (N+M)·D: past a budget, the middle is shown as replaced.
  const budget = Math.max(1000, Math.floor(3e7 / (midA.length + midB.length + 1)));
  const mid = grouped(myers(midA, midB, budget) || [...midA.map(() => '-'), ...midB.map(() => '+')]);
  const ops = [];
  let i = 0;
  let j = 0;
  const push = (op) => {
    if (op === ' ') ops.push({ op, text: a[i], a: ++i, b: ++j });
    else if (op === '-') ops.push({ op, text: a[i], a: ++i, b: null });
    else ops.push({ op, text: b[j], a: null, b: ++j });
  };
  for (let k = 0; k < pre; k++) push(' ');
  for (const op of mid) push(op);
  for (let k = 0; k < suf; k++) push(' ');
  return ops;
}

// grouped puts each run of changes as its removals, then its additions,
// as unified diffs read.
function grouped(ops) {
  const out = [];
  for (let i = 0; i < ops.length;) {
    if (ops[i] === ' ') { out.push(' '); i++; continue; }
    let j = i;
    while (j < ops.length && ops[j] !== ' ') j++;
    const run = ops.slice(i, j);
    out.push(...run.filter((o) => o === '-'), ...run.filter((o) => o === '+'));
    i = j;
  }
  return out;
}

// myers returns the edit script of a to b as ' ', '-', '+' per line, or
// null when more than maxD lines differ.
function myers(a, b, maxD) {
  const n = a.length;
  const m = b.length;
  if (!n || !m) return [...a.map(() => '-'), ...b.map(() => '+')];
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= Math.min(max, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2)); // v before step d, k in [-d-1, d+1]
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m);
    }
  }
  return null;
}

function backtrack(trace, n, m) {
  const out = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const s = trace[d];
    const V = (k) => s[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && V(k - 1) < V(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = V(pk);
    const py = px - pk;
    const sx = down ? px : px + 1; // where the snake after the edit starts
    while (x > sx) { out.push(' '); x--; y--; }
    out.push(down ? '+' : '-');
    x = px;
    y = py;
  }
  while (x > 0) { out.push(' '); x--; }
  return out.reverse();
}

/** Groups the operations into hunks of changes with CONTEXT lines around them. */
export function hunks(ops, context = CONTEXT) {
  const out = [];
  let cur = null;
  ops.forEach((o, i) => {
    if (o.op === ' ') return;
    const from = Math.max(0, i - context);
    if (cur && from <= cur.to) cur.to = Math.min(ops.length, i + context + 1);
    else {
      cur = { from, to: Math.min(ops.length, i + context + 1) };
      out.push(cur);
    }
  });
  return out.map(({ from, to }) => {
    const body = ops.slice(from, to);
    const first = (k) => body.find((o) => o[k] !== null)?.[k] ?? 0;
    const count = (k) => body.filter((o) => o[k] !== null).length;
    const before = (k) => ops.slice(0, from).filter((o) => o[k] !== null).length;
    const start = (k) => (count(k) ? first(k) : before(k));
    return { header: `@@ -${start('a')},${count('a')} +${start('b')},${count('b')} @@`, ops: body };
  });
}

/** The path relative to base when it lies inside it. */
function shortPath(path, base) {
  if (!path || !base) return path || '';
  const b = base.replace(/[/\\]+$/, '');
  return path.startsWith(`${b}/`) || path.startsWith(`${b}\\`) ? path.slice(b.length + 1) : path;
}

/** The diff items of an ACP tool call content list. */
export function diffsOf(content) {
  return Array.isArray(content) ? content.filter((c) => c && c.type === 'diff' && typeof c.path === 'string') : [];
}

/**
 * Renders one ACP diff as a unified diff of at most shown lines until
 * "Show all"; base shortens its path.
 */
export function renderDiff(d, base = '', shown = SHOWN) {
  const isNew = d.oldText === null || d.oldText === undefined;
  const ops = diffLines(isNew ? null : d.oldText, d.newText ?? '');
  const added = ops.filter((o) => o.op === '+').length;
  const removed = ops.filter((o) => o.op === '-').length;
  const rows = [];
  for (const hk of hunks(ops)) {
    if (!isNew) rows.push({ header: hk.header });
    rows.push(...hk.ops);
  }
  const name = shortPath(d.path, base);
  const width = String(Math.max(1, ...ops.map((o) => Math.max(o.a || 0, o.b || 0)))).length;
  const body = h('div', { class: 'diff-body' });
  body.style.setProperty('--ln', `${width + 1}ch`); // the CSP allows no style attribute
  const el = h('div', {
    class: 'diff', role: 'group', 'data-testid': 'diff', dataset: { path: d.path, new: String(isNew) },
    'aria-label': `${isNew ? 'New file' : 'Changes to'} ${name}: ${added} ${added === 1 ? 'line' : 'lines'} added, ${removed} removed`,
  },
  h('div', { class: 'diff-head' },
    h('span', { class: 'diff-path', title: d.path, text: name }),
    isNew ? h('span', { class: 'badge', text: 'new file' }) : null,
    h('span', { class: 'diff-stat', 'aria-hidden': 'true' },
      h('span', { class: 'add', text: `+${added}` }), ' ', h('span', { class: 'del', text: `−${removed}` }))),
  body);
  if (!rows.length) body.append(h('div', { class: 'diff-none', text: 'No changes' }));
  const show = (n) => body.replaceChildren(...rows.slice(0, n).map((r) => row(r, isNew)));
  show(shown);
  if (rows.length > shown) {
    const more = h('button', { type: 'button', class: 'diff-more', 'aria-expanded': 'false' });
    const label = (open) => {
      more.textContent = open ? 'Show less' : `Show all ${rows.length} lines`;
      more.setAttribute('aria-expanded', String(open));
      el.dataset.expanded = String(open);
    };
    more.addEventListener('click', () => {
      const open = el.dataset.expanded !== 'true';
      show(open ? rows.length : shown);
      label(open);
    });
    label(false);
    el.append(more);
  }
  return el;
}

const SIGN = { ' ': ' ', '-': '−', '+': '+' };
const KIND = { ' ': 'ctx', '-': 'del', '+': 'add' };

function row(r, isNew) {
  if (r.header) return h('div', { class: 'dl hunk', text: r.header });
  return h('div', { class: `dl ${KIND[r.op]}` },
    isNew ? null : h('span', { class: 'ln', 'aria-hidden': 'true', text: r.a ?? '' }),
    h('span', { class: 'ln', 'aria-hidden': 'true', text: r.b ?? '' }),
    h('span', { class: 'sg', text: SIGN[r.op] }),
    h('span', { class: 'tx', text: r.text }));
}
