// The "working" bar under the conversation: what a running turn is doing
// (waiting for the model, thinking, running a tool, waiting for a
// permission answer, writing), from the prompt to the turn's end.
// div#working is a live region (role=status) that stays in the page while
// idle, so screen readers announce each change of its label; the elapsed
// seconds beside it are hidden from them (a ticking clock is noise).

import { $ } from './util.js';

const LABELS = {
  idle: '',
  waiting: 'Waiting for the model…',
  thinking: 'Thinking…',
  streaming: 'Writing…',
};

export class Working {
  constructor() {
    this.el = $('#working');
    this.label = $('#working .working-label');
    this.clock = $('#working .working-time');
    this.state = 'idle';
    this.detail = '';
    this.asking = null; // the tool a permission question is about
    this.since = 0;
    this.timer = null;
  }

  /** Sets what the turn does; detail names the tool for state "tool". */
  set(state, detail = '') {
    if (state === this.state && detail === this.detail) return;
    if (this.state === 'idle' && state !== 'idle') this.since = performance.now();
    this.state = state;
    this.detail = detail;
    this.render();
  }

  /** A permission question is shown (title) or answered (null). */
  permission(title) {
    this.asking = title;
    this.render();
  }

  render() {
    const asking = this.asking !== null && this.state !== 'idle';
    const state = asking ? 'permission' : this.state;
    let text = LABELS[state] ?? '';
    if (state === 'tool') text = `Running ${this.detail || 'a tool'}…`;
    if (state === 'permission') text = `Waiting for your answer: ${this.asking || 'a tool'}`;
    this.el.dataset.state = state;
    if (this.label.textContent !== text) this.label.textContent = text;
    if (state === 'idle') {
      clearInterval(this.timer);
      this.timer = null;
      this.clock.textContent = '';
    } else if (!this.timer) {
      this.tick();
      this.timer = setInterval(() => this.tick(), 1000);
    }
  }

  tick() {
    const s = Math.floor((performance.now() - this.since) / 1000);
    this.clock.textContent = s >= 1 ? `${s} s` : '';
  }
}
