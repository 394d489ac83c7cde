// The sessions sidebar: list and search (REST), open (ACP session/load),
// rename and delete (REST), and the new-session form (ACP session/new).

import { $, h, debounce, relTime, toast, errorText } from './util.js';
import { api } from './api.js';

export class Sessions {
  /** opts: onOpened() after the user opened or created a session. */
  constructor(conv, opts) {
    this.conv = conv;
    this.opts = opts;
    this.list = $('#sessions');
    this.search = $('#session-search');
    this.form = $('#new-session-form');
    this.items = [];
    this.seq = 0;
    this.models = null;
    this.skills = [];

    this.search.addEventListener('input', debounce(() => this.refresh(), 250));
    this.search.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.search.value) { this.search.value = ''; this.refresh(); }
    });
    this.list.addEventListener('click', (e) => this.onClick(e));
    this.list.addEventListener('keydown', (e) => this.onKey(e));
    $('#new-session').addEventListener('click', () => this.toggleForm());
    $('#new-session-cancel').addEventListener('click', () => this.toggleForm(false));
    this.form.addEventListener('submit', (e) => { e.preventDefault(); this.create(); });
    this.form.addEventListener('keydown', (e) => { if (e.key === 'Escape') this.toggleForm(false); });
    setInterval(() => this.render(), 60_000);
  }

  /** Takes the models and skills of initialize's _meta (REST is the fallback). */
  async setCatalog(meta = {}) {
    this.models = meta.models || null;
    this.skills = Array.isArray(meta.skills) ? meta.skills : null;
    // External ACP agents a session can run on (Claude Code, Codex, ...).
    this.agents = Array.isArray(meta.acp_agents) ? meta.acp_agents : [];
    try {
      if (!this.models) this.models = await api('/api/models');
      if (!this.skills) this.skills = await api('/api/skills');
    } catch (err) {
      toast(`Could not load the models: ${errorText(err)}`);
    }
    this.renderForm();
  }

  renderForm() {
    const sel = $('#new-model');
    const m = this.models || { providers: {} };
    const groups = Object.keys(m.providers || {}).sort().map((p) => {
      const pm = m.providers[p] || {};
      const models = pm.models && pm.models.length ? pm.models : [pm.default_model].filter(Boolean);
      return h('optgroup', { label: p }, models.map((name) => h('option', {
        value: `${p}/${name}`, selected: p === m.default_provider && name === pm.default_model,
      }, name)));
    });
    if ((this.agents || []).length) {
      groups.push(h('optgroup', { label: 'ACP agents' }, this.agents.map((name) =>
        h('option', { value: `agent:${name}` }, name))));
    }
    sel.replaceChildren(...groups);
    const box = $('#new-skills');
    box.replaceChildren(h('legend', { text: 'Skills' }), ...(this.skills || []).map((s) =>
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'skill', value: s }), s)));
    box.hidden = !(this.skills || []).length;
  }

  toggleForm(show = this.form.hidden) {
    this.form.hidden = !show;
    $('#new-session').setAttribute('aria-expanded', String(show));
    if (show) $('#new-model').focus();
    else $('#new-session').focus();
  }

  async create() {
    const model = $('#new-model').value;
    const skills = [...this.form.querySelectorAll('input[name=skill]:checked')].map((c) => c.value);
    const btn = this.form.querySelector('button[type=submit]');
    btn.disabled = true;
    try {
      await this.conv.create(model, skills);
      this.form.hidden = true;
      $('#new-session').setAttribute('aria-expanded', 'false');
      await this.refresh();
      this.opts.onOpened();
      $('#prompt').focus();
    } catch (err) {
      toast(`Could not create the session: ${errorText(err)}`);
    } finally {
      btn.disabled = false;
    }
  }

  /** Reloads the list (searching when the box has text). */
  async refresh() {
    const seq = ++this.seq;
    const q = this.search.value.trim();
    try {
      const list = await api(q ? `/api/sessions?q=${encodeURIComponent(q)}` : '/api/sessions');
      if (seq !== this.seq) return;
      this.items = Array.isArray(list) ? list : [];
    } catch (err) {
      if (seq !== this.seq) return;
      toast(`Could not list the sessions: ${errorText(err)}`);
    }
    this.render();
  }

  render() {
    const q = this.search.value.trim();
    if (!this.items.length) {
      this.list.replaceChildren(h('li', { class: 'empty', text: q ? 'No matching sessions' : 'No sessions yet' }));
      return;
    }
    const focused = document.activeElement?.closest?.('[data-testid=session-item]')?.dataset.sessionId;
    this.list.replaceChildren(...this.items.map((s) => this.item(s)));
    if (focused) this.list.querySelector(`[data-session-id="${CSS.escape(focused)}"]`)?.focus();
  }

  item(s) {
    const title = s.title || 'Untitled session';
    const active = s.id === this.conv.sessionId;
    const model = s.model ? (s.provider ? `${s.provider}/${s.model}` : s.model) : '';
    return h('li', {
      'data-testid': 'session-item', dataset: { sessionId: s.id }, tabindex: '0',
      class: active ? 'active' : '', 'aria-current': active ? 'true' : false, 'aria-label': `Open ${title}`,
    },
    h('div', { class: 's-main' },
      h('span', { class: 's-title', text: title }),
      h('span', { class: 's-meta' },
        h('time', { datetime: s.updated_at || '', title: s.updated_at ? new Date(s.updated_at).toLocaleString() : '' },
          relTime(s.updated_at)),
        model ? h('span', { class: 's-model', title: model, text: s.model }) : null)),
    h('div', { class: 's-actions' },
      h('button', { type: 'button', class: 'icon', dataset: { action: 'rename' }, 'aria-label': `Rename ${title}`, title: 'Rename', text: '✎' }),
      h('button', { type: 'button', class: 'icon', dataset: { action: 'delete' }, 'aria-label': `Delete ${title}`, title: 'Delete', text: '✕' })));
  }

  onClick(e) {
    const li = e.target.closest('[data-testid=session-item]');
    if (!li) return;
    const action = e.target.closest('[data-action]')?.dataset.action;
    if (action === 'rename') this.rename(li.dataset.sessionId);
    else if (action === 'delete') this.remove(li.dataset.sessionId);
    else this.open(li.dataset.sessionId);
  }

  onKey(e) {
    const li = e.target.closest('[data-testid=session-item]');
    if (!li) return;
    if ((e.key === 'Enter' || e.key === ' ') && e.target === li) {
      e.preventDefault();
      this.open(li.dataset.sessionId);
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const sib = e.key === 'ArrowDown' ? li.nextElementSibling : li.previousElementSibling;
      sib?.focus();
    } else if (e.key === 'Delete' && e.target === li) {
      this.remove(li.dataset.sessionId);
    } else if (e.key === 'F2' && e.target === li) {
      this.rename(li.dataset.sessionId);
    }
  }

  meta(id) { return this.items.find((s) => s.id === id) || {}; }

  open(id) {
    this.conv.open(id, this.meta(id));
    this.render();
    this.opts.onOpened();
  }

  async rename(id) {
    const current = this.meta(id).title || '';
    const title = prompt('New title for the session', current);
    if (title === null || !title.trim() || title === current) return;
    try {
      const meta = await api(`/api/sessions/${encodeURIComponent(id)}`, { method: 'PATCH', body: { title: title.trim() } });
      if (id === this.conv.sessionId) this.conv.setTitle(meta?.title || title.trim());
    } catch (err) {
      toast(`Could not rename the session: ${errorText(err)}`);
    }
    await this.refresh();
  }

  async remove(id) {
    const title = this.meta(id).title || 'this untitled session';
    if (!confirm(`Delete “${title}”? It moves to the trash.`)) return;
    try {
      await api(`/api/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (id === this.conv.sessionId) this.conv.close();
    } catch (err) {
      toast(`Could not delete the session: ${errorText(err)}`);
    }
    await this.refresh();
  }
}
