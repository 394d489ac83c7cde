// The one WebSocket to /ws: the {channel, data} envelope, JSON-RPC on the
// agent channel (ids per connection, responses routed by id), fs requests
// with ids, and reconnection with backoff.

const BACKOFF = [500, 1000, 2000, 4000, 8000, 10000];

export class RPCError extends Error {
  constructor({ code, message, data }) {
    super(message || 'JSON-RPC error');
    this.code = code;
    this.data = data;
  }
}

export class Connection {
  /**
   * handlers: onStatus(status), onOpen() (async; runs initialize),
   * onNotification(msg), onRequest(msg) -> result (may throw RPCError),
   * onFs(data) for unsolicited fs messages, onSystem(data),
   * beforeRetry() (async; awaited before reconnecting a socket that never opened).
   */
  /**
   * url: the address, or a function giving it; protocols (optional): a
   * function giving the subprotocols to offer on each (re)connection.
   */
  constructor(url, handlers, protocols) {
    this.url = url;
    this.protocols = protocols;
    this.h = handlers;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.reset();
    addEventListener('online', () => { if (!this.isOpen) this.retryNow(); });
    addEventListener('offline', () => this.status('offline'));
  }

  reset() {
    this.nextId = 1;
    this.pending = new Map(); // JSON-RPC id -> {resolve, reject}
    this.fsPending = new Map(); // fs request id -> {resolve, reject}
  }

  get isOpen() { return !!this.ws && this.ws.readyState === WebSocket.OPEN; }

  status(s) { this.h.onStatus?.(s); }

  connect() {
    clearTimeout(this.timer);
    const ws = new WebSocket(typeof this.url === 'function' ? this.url() : this.url, this.protocols?.());
    this.ws = ws;
    let opened = false;
    ws.onopen = async () => {
      if (ws !== this.ws) return;
      opened = true;
      this.attempt = 0;
      this.status('connected');
      try {
        await this.h.onOpen?.();
      } catch (err) {
        console.warn('openheim: setting up the connection failed', err);
      }
    };
    ws.onmessage = (ev) => { if (ws === this.ws) this.receive(ev.data); };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.failAll(new Error('connection lost'));
      this.status(navigator.onLine === false ? 'offline' : 'reconnecting');
      this.schedule(!opened);
    };
    // onerror is always followed by onclose, which does the work.
    ws.onerror = () => {};
  }

  schedule(neverOpened) {
    const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)];
    this.attempt++;
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      if (neverOpened) {
        try { await this.h.beforeRetry?.(); } catch { /* the retry reports it */ }
      }
      this.connect();
    }, delay);
  }

  retryNow() {
    if (this.ws && this.ws.readyState === WebSocket.CONNECTING) return;
    this.connect();
  }

  /** Closes the socket as if the network had dropped (reconnects). */
  drop() { this.ws?.close(); }

  failAll(err) {
    for (const p of this.pending.values()) p.reject(err);
    for (const p of this.fsPending.values()) p.reject(err);
    this.reset();
  }

  send(channel, data) {
    if (!this.isOpen) throw new Error('not connected');
    this.ws.send(JSON.stringify({ channel, data }));
  }

  request(method, params) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      try {
        this.send('agent', { jsonrpc: '2.0', id, method, params });
      } catch (err) {
        reject(err);
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  notify(method, params) {
    try { this.send('agent', { jsonrpc: '2.0', method, params }); } catch { /* nothing to tell: offline */ }
  }

  /** Sends an fs request with an id; resolves with its reply, rejects with an {type:"error"} reply's message. */
  fs(req) {
    return new Promise((resolve, reject) => {
      const id = `f${this.nextId++}`;
      try {
        this.send('fs', { ...req, id });
      } catch (err) {
        reject(err);
        return;
      }
      this.fsPending.set(id, { resolve, reject });
    });
  }

  receive(raw) {
    let env;
    try { env = JSON.parse(raw); } catch { return; }
    if (!env || typeof env !== 'object') return;
    const { channel, data } = env;
    if (channel === 'agent') this.receiveAgent(data);
    else if (channel === 'fs') this.receiveFs(data);
    else if (channel === 'system') this.h.onSystem?.(data);
  }

  receiveAgent(msg) {
    if (!msg || typeof msg !== 'object') return;
    if (msg.method === undefined) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new RPCError(msg.error));
      else p.resolve(msg.result);
      return;
    }
    if (msg.id === undefined || msg.id === null) {
      this.h.onNotification?.(msg);
      return;
    }
    // The answer goes only to the socket that asked: ids are per connection.
    const ws = this.ws;
    const reply = (data) => { if (ws === this.ws && this.isOpen) this.send('agent', { jsonrpc: '2.0', id: msg.id, ...data }); };
    Promise.resolve()
      .then(() => this.h.onRequest?.(msg))
      .then((result) => reply({ result: result ?? null }))
      .catch((err) => reply({ error: { code: err.code || -32603, message: err.message || String(err) } }));
  }

  receiveFs(data) {
    if (!data || typeof data !== 'object') return;
    const p = data.id !== undefined ? this.fsPending.get(data.id) : undefined;
    if (!p) {
      this.h.onFs?.(data);
      return;
    }
    this.fsPending.delete(data.id);
    if (data.type === 'error') p.reject(new Error(data.message || 'file operation failed'));
    else p.resolve(data);
  }
}
