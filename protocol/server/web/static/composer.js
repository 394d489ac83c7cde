// The prompt box under the conversation: text, image attachments, send and
// stop, and the open session's mode and model.

import { $, h, toast, errorText } from './util.js';

// The server closes a connection on frames over 8 MiB; keep well below.
const MAX_IMAGE_BYTES = 6 * 1024 * 1024;

export class Composer {
  constructor(conn, conv) {
    this.conn = conn;
    this.conv = conv;
    this.images = []; // {name, data (base64), mimeType, url}
    this.prompt = $('#prompt');
    this.sendBtn = $('#send');
    this.stopBtn = $('#stop');
    this.attach = $('#attach');
    this.thumbs = $('#attachments');
    this.mode = $('#mode-select');
    this.model = $('#model-select');

    $('#composer').addEventListener('submit', (e) => { e.preventDefault(); this.send(); });
    this.prompt.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    this.stopBtn.addEventListener('click', () => this.conv.cancel());
    this.attach.addEventListener('change', () => this.addFiles([...this.attach.files]));
    this.mode.addEventListener('change', () => this.setMode());
    this.model.addEventListener('change', () => this.setModel());
    this.update();
  }

  /** Enables the buttons for the open session's state. */
  update() {
    const running = this.conv.isRunning;
    this.stopBtn.disabled = !running;
    this.sendBtn.disabled = running || this.conv.loading;
    $('#session-controls').hidden = !this.conv.sessionId;
  }

  async send() {
    if (this.sendBtn.disabled) return;
    const text = this.prompt.value;
    if (!text.trim() && !this.images.length) return;
    const blocks = [];
    if (text.trim()) blocks.push({ type: 'text', text });
    for (const img of this.images) blocks.push({ type: 'image', data: img.data, mimeType: img.mimeType });
    this.prompt.value = '';
    this.clearImages();
    await this.conv.prompt(blocks);
  }

  async addFiles(files) {
    for (const f of files) {
      if (!f.type.startsWith('image/')) { toast(`${f.name} is not an image`); continue; }
      if (f.size > MAX_IMAGE_BYTES) { toast(`${f.name} is too large (6 MB at most)`); continue; }
      try {
        const url = await readDataURL(f);
        const comma = url.indexOf(',');
        this.images.push({ name: f.name, mimeType: f.type, data: url.slice(comma + 1), url });
      } catch {
        toast(`Could not read ${f.name}`);
      }
    }
    this.attach.value = '';
    this.renderThumbs();
  }

  renderThumbs() {
    this.thumbs.replaceChildren(...this.images.map((img, i) => h('figure', { class: 'attachment' },
      h('img', { src: img.url, alt: img.name }),
      h('button', {
        type: 'button', class: 'remove', 'aria-label': `Remove ${img.name}`, text: '×',
        onclick: () => { this.images.splice(i, 1); this.renderThumbs(); this.prompt.focus(); },
      }))));
    this.thumbs.hidden = !this.images.length;
  }

  clearImages() {
    this.images = [];
    this.renderThumbs();
  }

  /** Shows the modes and model options of a session/new or session/load answer. */
  applySession(res) {
    const modes = res && res.modes;
    if (modes && Array.isArray(modes.availableModes)) {
      this.mode.replaceChildren(...modes.availableModes.map((m) =>
        h('option', { value: m.id, title: m.description || '', selected: m.id === modes.currentModeId }, m.name || m.id)));
    }
    this.mode.parentElement.hidden = !this.mode.options.length;
    const opt = res && Array.isArray(res.configOptions) ? res.configOptions.find((o) => o.id === 'model') : null;
    if (opt) {
      this.model.replaceChildren(...(opt.options || []).map((o) =>
        h('option', { value: o.value, selected: o.value === opt.currentValue }, o.description ? `${o.description}/${o.name}` : o.name)));
    }
    this.model.parentElement.hidden = !this.model.options.length;
  }

  showMode(id) {
    if (id) this.mode.value = id;
  }

  async setMode() {
    try {
      await this.conn.request('session/set_mode', { sessionId: this.conv.sessionId, modeId: this.mode.value });
    } catch (err) {
      toast(`Could not change the mode: ${errorText(err)}`);
    }
  }

  async setModel() {
    try {
      const res = await this.conn.request('session/set_config_option',
        { sessionId: this.conv.sessionId, configId: 'model', value: this.model.value });
      this.applySession(res);
    } catch (err) {
      toast(`Could not change the model: ${errorText(err)}`);
    }
  }
}

function readDataURL(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}
