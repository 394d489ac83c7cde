// Entry point: wires the connection, the panels and the theme, and marks
// body[data-ready=true] once initialize answered and the sessions are listed.

import { $, toast, errorText } from './util.js';
import { api, adoptURLToken, token } from './api.js';
import { Connection } from './ws.js';
import { Conversation } from './conversation.js';
import { Composer } from './composer.js';
import { Permissions } from './permission.js';
import { Sessions } from './sessions.js';
import { Workspace } from './workspace.js';
import { loadTools } from './tools.js';
import { Working } from './working.js';

adoptURLToken();

const body = document.body;
const narrow = matchMedia('(max-width: 800px)');
let workDir = '';

function wsURL() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

// A browser sets no header on a WebSocket handshake, so the token rides in
// a subprotocol ("openheim.bearer." + unpadded base64url), never in the
// address (which proxies log); the server selects "openheim".
function wsProtocols() {
  const t = token();
  if (!t) return ['openheim'];
  const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(t)))
    .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return ['openheim', `openheim.bearer.${b64}`];
}

const conn = new Connection(wsURL, {
  onStatus: (s) => {
    const el = $('#conn-status');
    el.textContent = s;
    el.dataset.state = s;
    if (s !== 'connected') {
      perms.dropAll();
      composer.update();
    } else if ($('#toast').dataset.kind === 'info') {
      $('#toast').hidden = true; // "shutting down" is old news
    }
  },
  onOpen: () => onOpen(),
  onNotification: (msg) => { if (msg.method === 'session/update') conv.onUpdate(msg.params); },
  onRequest: (msg) => {
    if (msg.method === 'session/request_permission') {
      // Its toolCall is an update of the call (ACP ToolCallUpdate): the card
      // shows what the dialog shows, diffs included.
      const tc = msg.params?.toolCall;
      if (tc?.toolCallId) conv.onUpdate({ sessionId: msg.params.sessionId, update: { ...tc, sessionUpdate: 'tool_call_update' } });
      return perms.ask(msg.params);
    }
    throw Object.assign(new Error(`Method not found: ${msg.method}`), { code: -32601 });
  },
  onFs: (data) => workspace.onFs(data),
  onSystem: (data) => {
    if (data?.type === 'shutting_down') toast(data.message || 'The server is shutting down', 'info');
    else if (data?.type === 'error') toast(data.message || 'server error');
  },
  // A socket that never opened may have been refused for its token: REST
  // tells, and asks for a new one.
  beforeRetry: () => api('/healthz'),
}, wsProtocols);

const working = new Working();
const perms = new Permissions({ base: () => conv.cwd || workDir, onAsk: (title) => working.permission(title) });
const conv = new Conversation(conn, {
  onActivity: (state, detail) => working.set(state, detail),
  workDir: () => workDir,
  onState: () => composer.update(),
  onSession: (res) => composer.applySession(res),
  onMode: (id) => composer.showMode(id),
  onTurnEnd: (id) => { perms.dropSession(id); sessions.refresh(); },
  onInfo: () => refreshSoon(),
});
const composer = new Composer(conn, conv);
const sessions = new Sessions(conv, { onOpened: () => { if (narrow.matches) setPanel('sessions', false); } });
const workspace = new Workspace(conn);

let refreshTimer;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => sessions.refresh(), 200);
}

let listed = null; // the first sessions listing
let initialized = false;

async function onOpen() {
  const init = await conn.request('initialize', {
    protocolVersion: 1,
    clientCapabilities: {},
    clientInfo: { name: 'openheim-web', title: 'Openheim', version: '1.0.0' },
  });
  workspace.connected();
  await sessions.setCatalog(init?._meta || {});
  if (initialized) {
    // A reconnect: render the open session again from the server's copy.
    await conv.reload();
    sessions.refresh();
    return;
  }
  initialized = true;
  await listed;
  body.dataset.ready = 'true';
}

// ---- panels ----

function setPanel(which, open) {
  const attr = which === 'sessions' ? 'sessions' : 'panel';
  body.dataset[attr] = open ? 'open' : 'closed';
  $(which === 'sessions' ? '#toggle-sessions' : '#toggle-workspace').setAttribute('aria-expanded', String(open));
  // On a phone only one overlay at a time.
  if (open && narrow.matches) {
    const other = which === 'sessions' ? 'panel' : 'sessions';
    if (body.dataset[other] === 'open') setPanel(other === 'panel' ? 'workspace' : 'sessions', false);
  }
}

function showView(view, reveal = true) {
  body.dataset.view = view;
  $('#workspace-view').hidden = view !== 'workspace';
  $('#tools-view').hidden = view !== 'tools';
  $('#tab-workspace').setAttribute('aria-pressed', String(view === 'workspace'));
  $('#tab-tools').setAttribute('aria-pressed', String(view === 'tools'));
  if (reveal) setPanel('workspace', true);
  if (view === 'tools' && reveal) loadTools();
}

function layoutDefaults() {
  setPanel('sessions', !narrow.matches);
  setPanel('workspace', !narrow.matches);
}

$('#toggle-sessions').addEventListener('click', () => setPanel('sessions', body.dataset.sessions !== 'open'));
$('#toggle-workspace').addEventListener('click', () => setPanel('workspace', body.dataset.panel !== 'open'));
$('#tab-workspace').addEventListener('click', () => showView('workspace'));
$('#tab-tools').addEventListener('click', () => showView('tools'));
narrow.addEventListener('change', layoutDefaults);
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || !narrow.matches || document.querySelector('dialog[open]')) return;
  if (body.dataset.sessions === 'open') { setPanel('sessions', false); $('#toggle-sessions').focus(); }
  else if (body.dataset.panel === 'open') { setPanel('workspace', false); $('#toggle-workspace').focus(); }
});

// ---- theme ----

const ANSI = {
  black: '#5c5c5c', red: '#d75f5f', green: '#5faf5f', yellow: '#d7af00',
  blue: '#5f87d7', magenta: '#af5fd7', cyan: '#00afaf', white: '#b8b8b8',
};
const ANSI_BRIGHT = ['#808080', '#ff5f5f', '#87d787', '#ffd75f', '#87afff', '#d787ff', '#5fd7d7', '#e4e4e4'];

/** Maps tui.theme_color (an ANSI name, #hex, or a 0-255 xterm index) to a CSS colour, or null. */
export function accentColor(v) {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d{1,3}$/.test(v.trim()))) {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 255) return null;
    if (n < 8) return Object.values(ANSI)[n];
    if (n < 16) return ANSI_BRIGHT[n - 8];
    if (n >= 232) {
      const g = 8 + (n - 232) * 10;
      return `rgb(${g}, ${g}, ${g})`;
    }
    const levels = [0, 95, 135, 175, 215, 255];
    const c = n - 16;
    return `rgb(${levels[Math.floor(c / 36)]}, ${levels[Math.floor(c / 6) % 6]}, ${levels[c % 6]})`;
  }
  if (typeof v !== 'string') return null;
  const s = v.trim().toLowerCase();
  if (ANSI[s]) return ANSI[s];
  const bright = /^bright[-_ ]?(\w+)$/.exec(s);
  if (bright && ANSI[bright[1]]) return ANSI_BRIGHT[Object.keys(ANSI).indexOf(bright[1])];
  if (/^#([\da-f]{3}|[\da-f]{6})$/.test(s)) return s;
  return null;
}

function applyTheme(config) {
  const color = accentColor(config?.tui?.theme_color);
  if (!color) return;
  const root = document.documentElement.style;
  root.setProperty('--accent', color);
  // The text on accent-filled buttons: dark on light accents, light on dark ones.
  const probe = document.createElement('span');
  probe.style.color = color;
  document.body.append(probe);
  const [r, g, b] = getComputedStyle(probe).color.match(/\d+/g).map(Number);
  probe.remove();
  root.setProperty('--accent-fg', 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#111' : '#fff');
}

// ---- start ----

async function start() {
  layoutDefaults();
  showView('workspace', false);
  // The list first: it is the first thing to see, and needs nothing else.
  listed = sessions.refresh();
  try {
    const config = await api('/api/config');
    applyTheme(config);
    workDir = config?.work_dir || '';
    workspace.setRoot(workDir);
  } catch (err) {
    toast(`Could not load the configuration: ${errorText(err)}`);
  }
  conn.connect();
  // The tools view is hidden at first: its lists can wait for the sessions.
  listed.finally(() => loadTools());
}

start();
