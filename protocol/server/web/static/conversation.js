// The conversation log: the open session's ACP updates rendered as
// messages, thinking and tool cards; session/load, session/new, prompts.

import { $, h, errorText } from './util.js';
import { renderMarkdown } from './markdown.js';
import { newCard, updateCard, active } from './toolcard.js';

const IMAGE_MIME = /^image\/[\w.+-]+$/;

export class Conversation {
  /**
   * opts: onTurnEnd(sessionId), onInfo(sessionId), onState(), onSession(result), workDir(),
   * onActivity(state, detail): what the open session's running turn does (working.js).
   */
  constructor(conn, opts) {
    this.conn = conn;
    this.opts = opts;
    this.log = $('#messages');
    this.sessionId = null;
    this.cwd = '';
    this.gen = 0; // bumps when another session opens: stale answers are dropped
    this.running = new Set(); // sessions with a prompt of ours in flight
    this.loading = false;
    this.dirty = new Set();
    this.renderTimer = null;
    this.cards = new Map();
    this.runningTools = new Map(); // toolCallId -> title, of the calls that run now
    this.tail = null;
    this.log.addEventListener('click', (e) => this.copy(e));
  }

  get isRunning() { return !!this.sessionId && this.running.has(this.sessionId); }

  clear() {
    this.flush();
    this.log.replaceChildren();
    this.cards.clear();
    this.runningTools.clear();
    this.tail = null;
    this.activity(this.isRunning ? 'waiting' : 'idle');
    $('#usage').textContent = '';
    $('#empty-state').hidden = !!this.sessionId;
  }

  setTitle(title) {
    $('#session-title').textContent = title || (this.sessionId ? 'Untitled session' : 'No session');
  }

  /** Opens a stored session: its history arrives as session/update replay. */
  async open(id, meta = {}) {
    const gen = ++this.gen;
    this.sessionId = id;
    this.cwd = meta.cwd || '';
    this.setTitle(meta.title);
    this.clear();
    this.loading = true;
    this.opts.onState();
    try {
      const res = await this.conn.request('session/load', { sessionId: id, cwd: this.cwd, mcpServers: [] });
      if (gen !== this.gen) return;
      this.opts.onSession(res || {});
    } catch (err) {
      if (gen === this.gen) this.error(`Could not open the session: ${errorText(err)}`);
    } finally {
      if (gen === this.gen) {
        this.loading = false;
        this.flush();
        this.scrollEnd(true);
        this.opts.onState();
      }
    }
  }

  /** Re-renders the open session from scratch (after a reconnect). */
  reload() {
    if (this.sessionId) return this.open(this.sessionId, { cwd: this.cwd, title: $('#session-title').textContent });
    return Promise.resolve();
  }

  /** Creates a session (model "provider/model", or "agent:NAME" for an external ACP agent; skills) and makes it the open one. */
  async create(model, skills) {
    const meta = {};
    if (model && model.startsWith('agent:')) meta.agent = model.slice('agent:'.length);
    else if (model) meta.model = model;
    if (skills) meta.skills = skills;
    const params = { cwd: this.opts.workDir() || '', mcpServers: [] };
    if (Object.keys(meta).length) params._meta = meta;
    const res = await this.conn.request('session/new', params);
    this.gen++;
    this.sessionId = res.sessionId;
    this.cwd = params.cwd;
    this.setTitle('');
    this.clear();
    this.opts.onSession(res);
    this.opts.onState();
    return res.sessionId;
  }

  /** Forgets the open session (it was deleted). */
  close() {
    this.gen++;
    this.sessionId = null;
    this.setTitle('');
    this.clear();
    this.opts.onState();
  }

  async prompt(blocks) {
    if (!this.sessionId) {
      try {
        await this.create();
      } catch (err) {
        this.error(`Could not start a session: ${errorText(err)}`);
        return;
      }
    }
    const id = this.sessionId;
    this.user(blocks);
    this.scrollEnd(true);
    this.running.add(id);
    this.activity('waiting');
    this.opts.onState();
    try {
      const res = await this.conn.request('session/prompt', { sessionId: id, prompt: blocks });
      if (id === this.sessionId && res && res.stopReason && res.stopReason !== 'end_turn') {
        this.note(`Turn ended: ${res.stopReason.replace(/_/g, ' ')}`);
      }
    } catch (err) {
      if (id === this.sessionId) {
        this.error(err.message === 'connection lost'
          ? 'The connection was lost; the turn goes on on the server and shows when the session reloads.'
          : `Prompt failed: ${errorText(err)}`);
      }
    } finally {
      this.running.delete(id);
      if (id === this.sessionId) {
        this.runningTools.clear();
        this.activity('idle');
      }
      this.flush();
      this.opts.onState();
      this.opts.onTurnEnd(id);
    }
  }

  cancel() {
    if (this.sessionId) this.conn.notify('session/cancel', { sessionId: this.sessionId });
  }

  // ---- session/update ----

  onUpdate(params) {
    if (!params || !params.update) return;
    const u = params.update;
    if (u.sessionUpdate === 'session_info_update') this.opts.onInfo(params.sessionId, u);
    if (params.sessionId !== this.sessionId) return;
    $('#empty-state').hidden = true;
    const stick = this.nearEnd();
    switch (u.sessionUpdate) {
      case 'user_message_chunk': this.userChunk(u.content); break;
      case 'agent_message_chunk': this.agentChunk(u.content); this.activity('streaming'); break;
      case 'agent_thought_chunk': this.thoughtChunk(u.content); this.activity('thinking'); break;
      case 'tool_call': this.toolCall(u); break;
      case 'tool_call_update': this.toolCall(u); break;
      case 'plan': this.plan(u.entries || []); break;
      case 'usage_update':
        if (u.used !== undefined && u.size !== undefined) $('#usage').textContent = `context: ${u.used} / ${u.size} tokens`;
        break;
      case 'session_info_update':
        if (u.title) this.setTitle(u.title);
        if (u._meta?.openheim?.droppedEvents) this.note(`${u._meta.openheim.droppedEvents} updates were dropped (slow connection)`);
        break;
      case 'current_mode_update': this.opts.onMode?.(u.currentModeId); break;
      default: break;
    }
    if (stick) this.scrollEnd();
  }

  add(el, tail = null) {
    this.log.append(el);
    this.tail = tail;
    return el;
  }

  user(blocks) {
    const el = h('div', { class: 'msg user' });
    for (const b of blocks) this.appendContent(el, b);
    this.add(el, { kind: 'user', el });
  }

  userChunk(c) {
    if (this.tail?.kind !== 'user') {
      const el = h('div', { class: 'msg user' });
      this.add(el, { kind: 'user', el });
    }
    this.appendContent(this.tail.el, c);
  }

  /** Appends a user-side content block: text as text, images as thumbnails. */
  appendContent(el, c) {
    if (!c) return;
    if (c.type === 'text') {
      const last = el.lastElementChild;
      if (last && last.classList.contains('text')) last.textContent += c.text;
      else el.append(h('div', { class: 'text', text: c.text }));
    } else if (c.type === 'image' && IMAGE_MIME.test(c.mimeType || '')) {
      el.append(h('img', { class: 'thumb', src: `data:${c.mimeType};base64,${c.data}`, alt: 'attached image' }));
    } else if (c.type === 'resource_link') {
      el.append(h('div', { class: 'text', text: `📎 ${c.name || c.uri}` }));
    }
  }

  agentChunk(c) {
    if (!c) return;
    if (c.type === 'image' && IMAGE_MIME.test(c.mimeType || '')) {
      const el = this.tail?.kind === 'agent' ? this.tail.el : this.add(h('div', { class: 'msg assistant' }));
      el.append(h('img', { class: 'thumb', src: `data:${c.mimeType};base64,${c.data}`, alt: 'image from the agent' }));
      return;
    }
    if (c.type !== 'text') return;
    if (this.tail?.kind !== 'agent') {
      const el = h('div', { class: 'msg assistant' });
      this.add(el, { kind: 'agent', el, raw: '' });
    }
    this.tail.raw += c.text;
    this.markDirty(this.tail);
  }

  thoughtChunk(c) {
    if (!c || c.type !== 'text') return;
    if (this.tail?.kind !== 'thought') {
      const body = h('div', { class: 'thinking-body' });
      const el = h('details', { class: 'thinking' }, h('summary', { text: 'Thinking' }), body);
      this.add(el, { kind: 'thought', el, body, raw: '' });
    }
    this.tail.raw += c.text;
    this.tail.body.textContent = this.tail.raw;
  }

  markDirty(t) {
    this.dirty.add(t);
    if (!this.renderTimer) this.renderTimer = setTimeout(() => this.flush(), this.loading ? 0 : 30);
  }

  /** Renders the Markdown of messages that changed since the last render. */
  flush() {
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
    const stick = this.nearEnd();
    for (const t of this.dirty) t.el.innerHTML = renderMarkdown(t.raw);
    this.dirty.clear();
    if (stick) this.scrollEnd();
  }

  toolCall(u) {
    let card = this.cards.get(u.toolCallId);
    if (!card) {
      card = newCard(u.toolCallId, this.loading);
      this.cards.set(u.toolCallId, card);
      this.add(card.el);
    }
    updateCard(card, u, this.cwd || this.opts.workDir());
    if (active(card.el.dataset.status)) this.runningTools.set(u.toolCallId, card.title.textContent);
    else this.runningTools.delete(u.toolCallId);
    // After the last tool, the model reads the results: waiting again.
    if (this.runningTools.size) {
      const n = this.runningTools.size;
      this.activity('tool', n === 1 ? [...this.runningTools.values()][0] : `${n} tools`);
    } else {
      this.activity('waiting');
    }
  }

  /** Reports what the open session's own running turn does (nothing when it runs none). */
  activity(state, detail = '') {
    if (state !== 'idle' && !this.isRunning) return;
    this.opts.onActivity?.(state, detail);
  }

  plan(entries) {
    let el = this.log.lastElementChild;
    if (!el || !el.classList.contains('plan')) el = this.add(h('div', { class: 'plan', 'aria-label': 'Plan' }));
    el.replaceChildren(h('div', { class: 'tool-label', text: 'Plan' }), h('ol', {}, entries.map((e) =>
      h('li', { dataset: { status: e.status || 'pending' } }, e.content || ''))));
  }

  error(text) {
    this.add(h('div', { class: 'msg error', text }));
    this.scrollEnd(true);
  }

  note(text) {
    this.add(h('div', { class: 'msg note', text }));
  }

  nearEnd() {
    const l = this.log;
    return l.scrollHeight - l.scrollTop - l.clientHeight < 80;
  }

  scrollEnd(force) {
    if (force || this.nearEnd()) this.log.scrollTop = this.log.scrollHeight;
  }

  async copy(e) {
    const btn = e.target.closest('button.copy');
    if (!btn) return;
    const code = btn.parentElement.querySelector('code');
    try {
      await navigator.clipboard.writeText(code ? code.textContent : '');
      btn.textContent = 'Copied';
    } catch {
      btn.textContent = 'Copy failed';
    }
    setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
  }
}
