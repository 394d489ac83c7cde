// REST access and the bearer token. The token lives in sessionStorage for
// this tab only and is never left in the page's URL.

import { $ } from './util.js';

const KEY = 'openheim.token';

export function token() {
  try { return sessionStorage.getItem(KEY) || ''; } catch { return ''; }
}

function setToken(t) {
  try { sessionStorage.setItem(KEY, t); } catch { /* storage disabled: lives for this call only */ }
}

/**
 * Takes the token from the address the server printed
 * (http://host:port/#token=...), keeps it for this tab, and removes it from
 * the address bar and the history. The fragment never reaches a server, so
 * the token lands in no access log; ?token= (older links) is taken too.
 */
export function adoptURLToken() {
  const url = new URL(location.href);
  const hash = new URLSearchParams(url.hash.replace(/^#/, ''));
  const t = hash.get('token') ?? url.searchParams.get('token');
  if (t === null) return;
  if (t) setToken(t);
  hash.delete('token');
  url.searchParams.delete('token');
  const rest = hash.toString();
  history.replaceState(history.state, '', url.pathname + url.search + (rest ? `#${rest}` : ''));
}

let asking = null;
/** Shows dialog#token until the user gives a token; concurrent callers share one prompt. */
export function askToken(message) {
  if (asking) return asking;
  const dlg = $('#token');
  const form = $('#token-form');
  const input = $('#token-input');
  $('#token-message').textContent = message || 'This server needs an access token: open the address openheim serve printed, or paste the token kept in ~/.openheim/serve_token.';
  input.value = '';
  asking = new Promise((resolve) => {
    const done = (e) => {
      e.preventDefault();
      const t = input.value.trim();
      if (!t) return;
      setToken(t);
      form.removeEventListener('submit', done);
      dlg.close();
      asking = null;
      resolve(t);
    };
    form.addEventListener('submit', done);
    // Without a token nothing works, so the dialog cannot be dismissed.
    dlg.oncancel = (e) => e.preventDefault();
    if (!dlg.open) dlg.showModal();
    input.focus();
  });
  return asking;
}

export class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Calls the REST API and returns the decoded JSON. A 401 asks for a token
 * and retries; other failures throw HTTPError with the server's message.
 */
export async function api(path, { method = 'GET', body } = {}) {
  for (;;) {
    const headers = { Accept: 'application/json' };
    const t = token();
    if (t) headers.Authorization = `Bearer ${t}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store',
    });
    if (res.status === 401) {
      await askToken(t ? 'The token was refused; enter it again.' : undefined);
      continue;
    }
    let data = null;
    try { data = await res.json(); } catch { /* empty or not JSON */ }
    if (!res.ok) throw new HTTPError(res.status, (data && data.error) || `${res.status} ${res.statusText}`);
    return data;
  }
}
