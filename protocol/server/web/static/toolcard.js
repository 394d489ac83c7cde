// Tool cards: one per ACP tool call, updated by tool_call and
// tool_call_update. A call whose content holds diffs shows them in the card
// (never its raw JSON arguments); the rest sits under "Details".

import { h, pretty } from './util.js';
import { diffsOf, renderDiff } from './diff.js';

const STATUSES = new Set(['pending', 'in_progress', 'completed', 'failed']);
const DIFF_LINES = 12; // a card's diff before "Show all": the log stays readable

/** A new, empty card for the tool call id; replay marks a stored call (no duration). */
export function newCard(id, replay) {
  const title = h('span', { class: 'tool-title', text: 'tool' });
  const kind = h('span', { class: 'tool-kind' });
  const status = h('span', { class: 'tool-status' });
  const duration = h('span', { class: 'tool-duration' });
  const diffs = h('div', { class: 'tool-diffs', hidden: true });
  const inputLabel = h('div', { class: 'tool-label', text: 'Input' });
  const input = h('pre', { class: 'tool-input' });
  const output = h('pre', { class: 'tool-output' });
  const el = h('div', { class: 'tool-card', 'data-testid': 'tool-card', dataset: { status: 'pending', kind: 'other', toolCallId: id || '' } },
    h('div', { class: 'tool-head' }, h('span', { class: 'tool-icon', 'aria-hidden': 'true' }), title, kind, status, duration),
    diffs,
    h('details', { class: 'tool-details' }, h('summary', { text: 'Details' }),
      inputLabel, input,
      h('div', { class: 'tool-label', text: 'Output' }), output));
  return { el, title, kind, status, duration, diffs, inputLabel, input, output, start: performance.now(), replay, done: false, hasDiff: false };
}

/** Applies a tool_call or tool_call_update; base shortens the diffs' paths. */
export function updateCard(card, u, base) {
  if (u.title) card.title.textContent = u.title;
  if (u.kind) card.el.dataset.kind = u.kind;
  card.kind.textContent = card.el.dataset.kind;
  if (u.rawInput !== undefined) card.input.textContent = pretty(u.rawInput);
  // ACP replaces the whole content list on an update; a later list without
  // diffs (say, the tool's text result) keeps the diffs already shown, so
  // the card still says what changed once the call is done.
  const diffs = diffsOf(u.content);
  if (diffs.length) {
    card.diffs.replaceChildren(...diffs.map((d) => renderDiff(d, base, DIFF_LINES)));
    card.hasDiff = true;
  }
  card.diffs.hidden = !card.hasDiff;
  card.inputLabel.hidden = card.hasDiff;
  card.input.hidden = card.hasDiff;
  const out = u.rawOutput !== undefined ? pretty(u.rawOutput) : contentText(u.content);
  if (out) card.output.textContent = out;
  const st = STATUSES.has(u.status) ? u.status : card.el.dataset.status;
  card.el.dataset.status = st;
  card.status.textContent = st.replace('_', ' ');
  if ((st === 'completed' || st === 'failed') && !card.done) {
    card.done = true;
    if (!card.replay) card.duration.textContent = `${((performance.now() - card.start) / 1000).toFixed(1)} s`;
  }
}

/** Whether a status means the call still runs (or waits to). */
export const active = (status) => status === 'pending' || status === 'in_progress';

function contentText(content) {
  if (!Array.isArray(content)) return '';
  return content.map((c) => (c?.content?.type === 'text' ? c.content.text : ''))
    .filter(Boolean).join('\n');
}
