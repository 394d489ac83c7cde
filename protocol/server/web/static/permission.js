// session/request_permission: the agent asks before a tool runs. One
// request is shown at a time in dialog#permission; Escape rejects once.
// A call whose content holds diffs shows them (what the edit will do)
// instead of its raw JSON arguments.

import { $, h, pretty } from './util.js';
import { diffsOf, renderDiff } from './diff.js';

export class Permissions {
  /** opts: base() shortens diff paths; onAsk(title | null) while a question is shown. */
  constructor(opts = {}) {
    this.opts = opts;
    this.dlg = $('#permission');
    this.queue = [];
    this.current = null;
    this.dlg.addEventListener('cancel', (e) => {
      e.preventDefault();
      this.answer(this.optionOfKind('reject_once'));
    });
  }

  /** Resolves with the JSON-RPC result for the request's params. */
  ask(params) {
    return new Promise((resolve) => {
      this.queue.push({ params: params || {}, resolve });
      if (!this.current) this.next();
    });
  }

  next() {
    this.current = this.queue.shift() || null;
    this.opts.onAsk?.(this.current ? (this.current.params.toolCall?.title || 'a tool') : null);
    if (!this.current) {
      if (this.dlg.open) this.dlg.close();
      return;
    }
    const { toolCall = {}, options = [] } = this.current.params;
    $('#permission-tool').textContent = toolCall.title || 'a tool';
    $('#permission-kind').textContent = toolCall.kind || '';
    $('#permission-kind').hidden = !toolCall.kind;
    const diffs = diffsOf(toolCall.content);
    $('#permission-diff').replaceChildren(...diffs.map((d) => renderDiff(d, this.opts.base?.() || '')));
    $('#permission-diff').hidden = !diffs.length;
    this.dlg.classList.toggle('wide', diffs.length > 0);
    const input = diffs.length ? '' : pretty(toolCall.rawInput);
    $('#permission-input').textContent = input;
    $('#permission-input').hidden = !input;
    const buttons = options.map((o) => h('button', {
      type: 'button', class: o.kind && o.kind.startsWith('allow') ? 'primary' : '',
      dataset: { optionKind: o.kind || '', optionId: o.optionId },
      onclick: () => this.answer(o),
    }, o.name || o.kind || o.optionId));
    $('#permission-options').replaceChildren(...buttons);
    if (!this.dlg.open) this.dlg.showModal();
    buttons[0]?.focus();
  }

  optionOfKind(kind) {
    return (this.current?.params.options || []).find((o) => o.kind === kind) || null;
  }

  answer(option) {
    if (!this.current) return;
    this.current.resolve(option
      ? { outcome: { outcome: 'selected', optionId: option.optionId } }
      : { outcome: { outcome: 'cancelled' } });
    this.next();
  }

  /** The turn of sessionId ended: its questions are moot (the server counts them as rejected). */
  dropSession(sessionId) {
    const moot = (q) => q.params.sessionId === sessionId;
    for (const q of this.queue.filter(moot)) q.resolve({ outcome: { outcome: 'cancelled' } });
    this.queue = this.queue.filter((q) => !moot(q));
    if (this.current && moot(this.current)) {
      this.current.resolve({ outcome: { outcome: 'cancelled' } });
      this.next();
    }
  }

  /** The connection dropped: the server has refused these requests already. */
  dropAll() {
    for (const q of this.queue) q.resolve({ outcome: { outcome: 'cancelled' } });
    this.queue = [];
    if (this.current) this.current.resolve({ outcome: { outcome: 'cancelled' } });
    this.current = null;
    this.opts.onAsk?.(null);
    if (this.dlg.open) this.dlg.close();
  }
}
