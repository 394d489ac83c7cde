// The workspace panel over the fs channel: a lazy file tree kept live by
// the watch's fs_events, and a small editor (read, edit, write).

import { $, $$, h, toast, parentOf, baseName, joinPath } from './util.js';

export class Workspace {
  constructor(conn) {
    this.conn = conn;
    this.tree = $('#file-tree');
    this.editor = $('#editor');
    this.root = '';
    this.nodes = new Map(); // absolute path -> li
    this.expanded = new Set(); // absolute paths of open folders
    this.selected = null;
    this.file = null; // {path, dirty}
    this.pendingLists = new Map(); // folder -> timer (events are coalesced)

    this.tree.addEventListener('click', (e) => this.onClick(e));
    this.tree.addEventListener('keydown', (e) => this.onKey(e));
    $('#new-file').addEventListener('click', () => this.create(false));
    $('#new-folder').addEventListener('click', () => this.create(true));
    $('#refresh-tree').addEventListener('click', () => this.refreshAll());
    $('#edit').addEventListener('click', () => this.startEdit());
    $('#save').addEventListener('click', () => this.save());
    $('#close-editor').addEventListener('click', () => this.closeFile());
    this.editor.addEventListener('input', () => { if (this.file) { this.file.dirty = true; this.status('modified'); } });
    this.editor.addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === 's') { e.preventDefault(); this.save(); }
    });
  }

  setRoot(dir) { if (dir && !this.root) this.root = dir; }

  /** A new connection: watch the work dir and (re)list what is shown. */
  async connected() {
    try {
      await this.conn.fs({ action: 'watch', path: '' });
    } catch (err) {
      toast(`Watching the workspace failed: ${err.message}`);
    }
    await this.refreshAll();
  }

  async refreshAll() {
    await this.list(this.root, true);
    for (const dir of [...this.expanded]) if (this.nodes.has(dir)) await this.list(dir);
  }

  /** Lists a folder (the root when dir is the root) and reconciles its children. */
  async list(dir, isRoot = dir === this.root) {
    let res;
    try {
      res = await this.conn.fs({ action: 'list', path: isRoot ? '' : dir });
    } catch (err) {
      toast(err.message);
      return;
    }
    const entries = res.entries || [];
    if (isRoot && entries.length) this.root = parentOf(entries[0].path);
    const ul = isRoot ? this.tree : this.nodes.get(dir)?.querySelector(':scope > ul');
    if (ul) this.reconcile(ul, entries);
  }

  reconcile(ul, entries) {
    const old = new Map([...ul.children].map((li) => [li.dataset.path, li]));
    const sorted = [...entries].sort((a, b) => (b.is_dir - a.is_dir) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const level = ul === this.tree ? 1 : Number(ul.parentElement.getAttribute('aria-level')) + 1;
    const lis = sorted.map((e) => {
      const li = old.get(e.path);
      old.delete(e.path);
      if (li && (li.dataset.dir === 'true') === e.is_dir) return li;
      if (li) this.forget(li);
      return this.node(e, level);
    });
    for (const li of old.values()) this.forget(li);
    ul.replaceChildren(...lis);
    if (ul === this.tree && !lis.length) ul.append(h('li', { class: 'empty', role: 'none', text: 'The folder is empty' }));
  }

  node(e, level) {
    const li = h('li', {
      role: 'treeitem', dataset: { path: e.path, dir: String(e.is_dir) }, 'aria-level': level,
      'aria-selected': String(e.path === this.selected), 'aria-expanded': e.is_dir ? 'false' : false,
    },
    h('div', { class: 'node' },
      h('button', { type: 'button', class: 'node-label', title: e.path },
        h('span', { class: 'node-icon', 'aria-hidden': 'true', text: e.is_dir ? '▸' : '·' }), e.name),
      h('span', { class: 'node-actions' },
        h('button', { type: 'button', class: 'icon', dataset: { action: 'rename-file' }, 'aria-label': `Rename ${e.name}`, title: 'Rename', text: '✎' }),
        h('button', { type: 'button', class: 'icon', dataset: { action: 'delete-file' }, 'aria-label': `Delete ${e.name}`, title: 'Delete', text: '✕' }))),
    e.is_dir ? h('ul', { role: 'group', hidden: true }) : null);
    this.nodes.set(e.path, li);
    return li;
  }

  /** Drops a node and everything below it from the bookkeeping. */
  forget(li) {
    for (const n of [li, ...li.querySelectorAll('li[role=treeitem]')]) {
      this.nodes.delete(n.dataset.path);
      this.expanded.delete(n.dataset.path);
    }
    li.remove();
  }

  async toggle(li, open = li.getAttribute('aria-expanded') !== 'true') {
    const path = li.dataset.path;
    li.setAttribute('aria-expanded', String(open));
    li.querySelector(':scope > .node .node-icon').textContent = open ? '▾' : '▸';
    li.querySelector(':scope > ul').hidden = !open;
    if (open) {
      this.expanded.add(path);
      await this.list(path);
    } else {
      this.expanded.delete(path);
    }
  }

  select(li) {
    for (const n of this.tree.querySelectorAll('[aria-selected=true]')) n.setAttribute('aria-selected', 'false');
    li.setAttribute('aria-selected', 'true');
    this.selected = li.dataset.path;
  }

  onClick(e) {
    const li = e.target.closest('li[role=treeitem]');
    if (!li) return;
    const action = e.target.closest('[data-action]')?.dataset.action;
    if (action === 'rename-file') return this.rename(li);
    if (action === 'delete-file') return this.remove(li);
    this.select(li);
    if (li.dataset.dir === 'true') this.toggle(li);
    else this.openFile(li.dataset.path);
  }

  onKey(e) {
    const li = e.target.closest('li[role=treeitem]');
    if (!li || !e.target.classList.contains('node-label')) return;
    const isDir = li.dataset.dir === 'true';
    const open = li.getAttribute('aria-expanded') === 'true';
    const labels = $$('.node-label', this.tree).filter((b) => b.offsetParent !== null);
    const i = labels.indexOf(e.target);
    const move = (j) => labels[j]?.focus();
    switch (e.key) {
      case 'ArrowDown': move(i + 1); break;
      case 'ArrowUp': move(i - 1); break;
      case 'ArrowRight': if (isDir && !open) this.toggle(li, true); else move(i + 1); break;
      case 'ArrowLeft':
        if (isDir && open) this.toggle(li, false);
        else li.parentElement.closest('li[role=treeitem]')?.querySelector('.node-label').focus();
        break;
      case 'F2': this.rename(li); break;
      case 'Delete': this.remove(li); break;
      default: return;
    }
    e.preventDefault();
  }

  /** Applies an unsolicited fs message: events, and errors without an id. */
  onFs(data) {
    if (data.type === 'error') { toast(data.message || 'file operation failed'); return; }
    if (data.type !== 'fs_event' || !Array.isArray(data.paths)) return;
    const kind = data.eventKind || '';
    for (const p of data.paths) {
      if (kind.startsWith('Modify')) {
        if (this.file && p === this.file.path && !this.file.dirty && this.editor.readOnly) this.openFile(p, true);
        continue;
      }
      if (kind.startsWith('Remove') || kind.startsWith('Rename')) {
        const li = this.nodes.get(p);
        if (li) this.forget(li);
      }
      const dir = parentOf(p);
      if (dir === this.root || (this.expanded.has(dir) && this.nodes.has(dir))) this.relist(dir);
    }
  }

  relist(dir) {
    clearTimeout(this.pendingLists.get(dir));
    this.pendingLists.set(dir, setTimeout(() => { this.pendingLists.delete(dir); this.list(dir); }, 60));
  }

  /** The folder new files go to: the selected folder, the selected file's, or the root. */
  targetDir() {
    const li = this.selected && this.nodes.get(this.selected);
    if (!li) return this.root;
    return li.dataset.dir === 'true' ? li.dataset.path : parentOf(li.dataset.path);
  }

  async create(folder) {
    const dir = this.targetDir();
    const where = dir === this.root ? 'the workspace' : baseName(dir);
    const name = prompt(folder ? `New folder in ${where}` : `New file in ${where}`);
    if (!name || !name.trim()) return;
    const path = joinPath(dir || '', name.trim());
    try {
      await this.conn.fs(folder ? { action: 'mkdir', path } : { action: 'write', path, content: '' });
    } catch (err) {
      toast(err.message);
      return;
    }
    const li = this.nodes.get(dir);
    if (li && li.getAttribute('aria-expanded') !== 'true') await this.toggle(li, true);
    else await this.list(dir);
    const made = this.nodes.get(path);
    if (made) this.select(made);
    if (!folder) this.openFile(path);
  }

  async rename(li) {
    const from = li.dataset.path;
    const name = prompt(`Rename ${baseName(from)} to`, baseName(from));
    if (!name || !name.trim() || name === baseName(from)) return;
    const to = joinPath(parentOf(from), name.trim());
    try {
      await this.conn.fs({ action: 'rename', from, to });
    } catch (err) {
      toast(err.message);
      return;
    }
    if (this.file && this.file.path === from) { this.file.path = to; this.showPath(to); }
    this.relist(parentOf(from));
  }

  async remove(li) {
    const path = li.dataset.path;
    const what = li.dataset.dir === 'true' ? 'the folder' : 'the file';
    if (!confirm(`Delete ${what} ${baseName(path)}?`)) return;
    try {
      await this.conn.fs({ action: 'delete', path });
    } catch (err) {
      toast(err.message);
      return;
    }
    if (this.file && (this.file.path === path || this.file.path.startsWith(path + '/'))) this.closeFile(true);
    if (this.nodes.get(path)) this.forget(this.nodes.get(path));
  }

  async openFile(path, reload = false) {
    if (!reload && this.file?.dirty && path !== this.file.path && !confirm('Discard the unsaved changes?')) return;
    let res;
    try {
      res = await this.conn.fs({ action: 'read', path });
    } catch (err) {
      toast(err.message);
      return;
    }
    $('#editor-pane').hidden = false;
    this.showPath(path);
    this.editor.value = res.content ?? '';
    if (!reload || !this.file) {
      this.file = { path, dirty: false };
      this.editor.readOnly = true;
      $('#edit').disabled = false;
      $('#save').disabled = true;
      this.status('read-only');
    } else {
      this.status('reloaded');
    }
  }

  startEdit() {
    if (!this.file) return;
    this.editor.readOnly = false;
    $('#edit').disabled = true;
    $('#save').disabled = false;
    this.status('editing');
    this.editor.focus();
  }

  async save() {
    if (!this.file || this.editor.readOnly) return;
    const { path } = this.file;
    try {
      await this.conn.fs({ action: 'write', path, content: this.editor.value });
    } catch (err) {
      toast(err.message);
      return;
    }
    if (this.file && this.file.path === path) this.file.dirty = false;
    this.status('saved');
  }

  closeFile(force = false) {
    if (!force && this.file?.dirty && !confirm('Discard the unsaved changes?')) return;
    this.file = null;
    this.editor.value = '';
    this.editor.readOnly = true;
    $('#editor-pane').hidden = true;
  }

  status(text) { $('#editor-status').textContent = text; }

  /** Shows the open file's path relative to the work dir (the full one on hover). */
  showPath(path) {
    const el = $('#editor-path');
    const root = this.root.replace(/[\\/]$/, '');
    el.textContent = root && path.startsWith(root) && path.length > root.length ? path.slice(root.length + 1) : path;
    el.title = path;
  }
}
