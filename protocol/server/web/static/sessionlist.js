// Rendering of the sessions sidebar: items under date groups (Today,
// Yesterday, This week, then one group per month), and search results
// with the text that matched, the query's words marked.

import { h, relTime } from './util.js';

// Formatters are made once: making one per item is what slows a long list.
const fmt = {
  month: new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' }),
  weekday: new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: 'numeric', minute: '2-digit' }),
  day: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' }),
  full: new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short' }),
};

function dayStart(d, back = 0) {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - back).getTime();
}

/** The date group of a time: {key, label}; "This week" is the last seven days. */
export function dateGroup(iso, now = new Date()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return { key: 'undated', label: 'Undated' };
  if (t >= dayStart(now)) return { key: 'today', label: 'Today' };
  if (t >= dayStart(now, 1)) return { key: 'yesterday', label: 'Yesterday' };
  if (t >= dayStart(now, 6)) return { key: 'week', label: 'This week' };
  const d = new Date(t);
  return { key: `m${d.getFullYear()}-${d.getMonth()}`, label: fmt.month.format(d) };
}

/** The short time an item shows, by its group. */
function when(iso, group) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  if (group === 'today') return relTime(iso);
  if (group === 'yesterday' || group === 'week') return fmt.weekday.format(t);
  return fmt.day.format(t);
}

/** One session item; active marks the open one; q marks its words in the snippet. */
export function item(s, { active, group, q }) {
  const title = s.title || 'Untitled session';
  const model = s.model ? (s.provider ? `${s.provider}/${s.model}` : s.model) : '';
  const t = Date.parse(s.updated_at || '');
  const snippet = q && s.snippet && s.snippet !== s.title ? s.snippet : '';
  return h('li', {
    'data-testid': 'session-item', dataset: { sessionId: s.id }, tabindex: '0',
    class: active ? 'active' : '', 'aria-current': active ? 'true' : false, 'aria-label': `Open ${title}`,
  },
  h('div', { class: 's-main' },
    h('span', { class: 's-title' }, q ? marked(title, q) : title),
    snippet ? h('span', { class: 's-snippet', 'data-testid': 'session-snippet' }, marked(snippet, q)) : null,
    h('span', { class: 's-meta' },
      h('time', { datetime: s.updated_at || '', title: Number.isNaN(t) ? '' : fmt.full.format(t), dataset: { group } },
        when(s.updated_at, group)),
      model ? h('span', { class: 's-model', title: model, text: s.model }) : null)),
  h('div', { class: 's-actions' },
    h('button', { type: 'button', class: 'icon', dataset: { action: 'rename' }, 'aria-label': `Rename ${title}`, title: 'Rename', text: '✎' }),
    h('button', { type: 'button', class: 'icon', dataset: { action: 'delete' }, 'aria-label': `Delete ${title}`, title: 'Delete', text: '✕' })));
}

/** A group: its heading and the list its items go in. */
export function group(g) {
  const id = `sg-${g.key}`;
  const list = h('ul', { class: 's-items', 'aria-labelledby': id });
  const el = h('li', { class: 's-group', 'data-testid': 'session-group', dataset: { group: g.key } },
    h('h3', { class: 's-group-label', id, text: g.label }), list);
  return { el, list, key: g.key };
}

/** Refreshes the relative times of today's items ("5 min ago"). */
export function retime(root) {
  for (const t of root.querySelectorAll('time[data-group=today]')) t.textContent = when(t.getAttribute('datetime'), 'today');
}

/** Text nodes and <mark>s: the query's words (two letters or more) marked, case ignored. */
export function marked(text, q) {
  const words = [...new Set(q.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length > 1))];
  if (!words.length) return [text];
  const re = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'giu');
  const out = [];
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(h('mark', { text: m[0] }));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}
