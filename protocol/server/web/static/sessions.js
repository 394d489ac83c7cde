// The sessions sidebar: list (REST, a page at a time as it scrolls, under
// date groups) and search (REST ?q=, with the text that matched), open
// (ACP session/load), rename and delete (REST), and the new-session form
// (ACP session/new).

import { $, h, debounce, toast, errorText } from './util.js';
import { api } from './api.js';
import { dateGroup, group, item, retime } from './sessionlist.js';

const FIRST = 40; // sessions of the first request: a tall screen's worth, fast to paint
const PAGE = 100; // sessions of each later request, as the list scrolls
const SEARCH_LIMIT = 50;

export class Sessions {
  /** opts: onOpened() after the user opened or created a session. */
  constructor(conv, opts) {
    this.conv = conv;
    this.opts = opts;
    this.list = $('#sessions');
    this.search = $('#session-search');
    this.form = $('#new-session-form');
    this.items = [];
    this.mode = 'list'; // or 'search': what this.items holds
    this.more = false; // the server may hold more sessions than loaded
    this.loadingMore = false;
    this.seq = 0;
    this.painted = false;
    this.models = null;
    this.skills = [];
    this.groups = [];
    this.day = new Date().toDateString();
    this.sentinel = h('li', { class: 's-more' },
      h('button', { type: 'button', class: 'link', text: 'Show more sessions', onclick: () => this.loadMore() }));
    // The next page loads before the end of the list scrolls into view.
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.loadMore();
    }, { root: this.list, rootMargin: '600px 0px' });

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
    setInterval(() => this.tick(), 60_000);
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

  get query() { return this.search.value.trim(); }

  /**
   * Reloads the list: the search results when the box has text, else the
   * first page, merged into what was loaded so the pages below stay.
   */
  async refresh() {
    const seq = ++this.seq;
    const q = this.query;
    const first = !this.painted;
    if (first) performance.mark('openheim:sessions-request');
    try {
      const page = await api(q ? `/api/sessions?q=${encodeURIComponent(q)}&limit=${SEARCH_LIMIT}` : `/api/sessions?limit=${FIRST}`);
      if (first) performance.mark('openheim:sessions-response');
      if (seq !== this.seq) return;
      const list = Array.isArray(page) ? page : [];
      this.items = q || this.mode === 'search' ? list : merge(list, this.items);
      this.more = !q && list.length === FIRST && (this.more || this.items.length === list.length);
      this.mode = q ? 'search' : 'list';
    } catch (err) {
      if (seq !== this.seq) return;
      toast(`Could not list the sessions: ${errorText(err)}`);
    }
    this.render();
    if (first) {
      this.painted = true;
      // The frame after this one's callback is painted: mark it for the
      // timing of the first screen (the web client's browser test reads it).
      requestAnimationFrame(() => setTimeout(() => {
        performance.mark('openheim:sessions-painted');
        performance.measure('openheim:sessions-first-paint', 'openheim:sessions-request', 'openheim:sessions-painted');
      }));
    }
  }

  /** Loads the next page of the list and appends it. */
  async loadMore() {
    if (!this.more || this.loadingMore || this.mode !== 'list') return;
    this.loadingMore = true;
    const seq = this.seq;
    try {
      const page = await api(`/api/sessions?limit=${PAGE}&offset=${this.items.length}`);
      if (seq !== this.seq) return;
      const list = Array.isArray(page) ? page : [];
      const have = new Set(this.items.map((s) => s.id));
      const fresh = list.filter((s) => !have.has(s.id));
      this.items.push(...fresh);
      this.more = list.length === PAGE;
      this.append(fresh);
    } catch (err) {
      toast(`Could not list more sessions: ${errorText(err)}`);
    } finally {
      this.loadingMore = false;
    }
  }

  render() {
    const q = this.mode === 'search' ? this.query : '';
    this.observer.disconnect();
    this.groups = [];
    this.day = new Date().toDateString();
    if (!this.items.length) {
      this.list.replaceChildren(h('li', { class: 'empty', text: q ? 'No matching sessions' : 'No sessions yet' }));
      return;
    }
    const focused = document.activeElement?.closest?.('[data-testid=session-item]')?.dataset.sessionId;
    if (q) {
      const n = this.items.length;
      const g = group({ key: 'matches', label: `${n}${n === SEARCH_LIMIT ? '+' : ''} ${n === 1 ? 'match' : 'matches'}` });
      g.list.append(...this.items.map((s) => item(s, { active: s.id === this.conv.sessionId, group: dateGroup(s.updated_at).key, q })));
      this.list.replaceChildren(g.el);
    } else {
      this.list.replaceChildren();
      this.append(this.items);
    }
    if (focused) this.list.querySelector(`[data-session-id="${CSS.escape(focused)}"]`)?.focus();
  }

  /** Appends sessions (older than those shown) under their date groups. */
  append(items) {
    const now = new Date();
    let last = this.groups[this.groups.length - 1];
    for (const s of items) {
      const g = dateGroup(s.updated_at, now);
      if (!last || last.key !== g.key) {
        last = group(g);
        this.groups.push(last);
        this.list.append(last.el);
      }
      last.list.append(item(s, { active: s.id === this.conv.sessionId, group: g.key }));
    }
    this.sentinel.remove();
    if (this.more) {
      this.list.append(this.sentinel);
      this.observer.observe(this.sentinel);
    }
  }

  /** Every minute: new relative times; a new day regroups. */
  tick() {
    if (new Date().toDateString() !== this.day) this.render();
    else retime(this.list);
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
      const all = [...this.list.querySelectorAll('[data-testid=session-item]')];
      all[all.indexOf(li) + (e.key === 'ArrowDown' ? 1 : -1)]?.focus();
    } else if (e.key === 'Delete' && e.target === li) {
      this.remove(li.dataset.sessionId);
    } else if (e.key === 'F2' && e.target === li) {
      this.rename(li.dataset.sessionId);
    }
  }

  meta(id) { return this.items.find((s) => s.id === id) || {}; }

  open(id) {
    this.conv.open(id, this.meta(id));
    for (const li of this.list.querySelectorAll('[data-testid=session-item]')) {
      const on = li.dataset.sessionId === id;
      li.classList.toggle('active', on);
      if (on) li.setAttribute('aria-current', 'true');
      else li.removeAttribute('aria-current');
    }
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
      this.items = this.items.filter((s) => s.id !== id);
      if (id === this.conv.sessionId) this.conv.close();
    } catch (err) {
      toast(`Could not delete the session: ${errorText(err)}`);
    }
    await this.refresh();
  }
}

/**
 * The first page joined with the pages loaded before: a session in the new
 * page moves to its place, and of the old ones only those older than the
 * page's last stay (a newer one missing from the page was deleted).
 */
function merge(page, old) {
  if (!page.length) return [];
  const ids = new Set(page.map((s) => s.id));
  const last = Date.parse(page[page.length - 1].updated_at);
  return [...page, ...old.filter((s) => !ids.has(s.id) && !(Date.parse(s.updated_at) > last))];
}
