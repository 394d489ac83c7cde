// The tools view: the tools a turn is offered and the MCP servers.

import { $, h, toast, errorText } from './util.js';
import { api } from './api.js';

export async function loadTools() {
  let tools = [];
  let servers = [];
  try {
    [tools, servers] = await Promise.all([api('/api/tools'), api('/api/mcp-servers')]);
  } catch (err) {
    toast(`Could not load the tools: ${errorText(err)}`);
    return;
  }
  renderTools(Array.isArray(tools) ? tools : [], Array.isArray(servers) ? servers : []);
}

function renderTools(tools, servers) {
  // MCP tools are named "<server>__<tool>".
  const mcpOf = (name) => servers.find((s) => name.startsWith(`${s.name}__`))?.name;
  const items = tools.map((t) => {
    const f = t.function || t;
    const server = mcpOf(f.name || '');
    const kind = t.kind || f.kind || (server ? `MCP · ${server}` : 'built-in');
    return h('li', { dataset: { tool: f.name || '' } },
      h('div', { class: 'row' }, h('code', { class: 'tool-name', text: f.name || '' }), h('span', { class: 'badge', text: kind })),
      f.description ? h('p', { class: 'desc', text: firstParagraph(f.description) }) : null);
  });
  $('#tool-list').replaceChildren(...(items.length ? items : [h('li', { class: 'empty', text: 'No tools' })]));
  $('#tool-count').textContent = `(${tools.length})`;

  const rows = servers.map((s) => h('li', { dataset: { mcp: s.name, connected: String(!!s.connected) } },
    h('div', { class: 'row' },
      h('strong', { text: s.name }),
      h('span', { class: `badge ${s.connected ? 'ok' : 'bad'}`, text: s.connected ? 'connected' : 'not connected' })),
    h('div', { class: 'desc' },
      h('span', { class: 'transport', text: s.transport || 'unknown' }), ' · ',
      h('span', { class: 'count', text: `${s.tool_count ?? 0} tools` }),
      s.url || s.command ? h('span', { class: 'where', text: ` · ${s.url || s.command}` }) : null),
    s.error ? h('p', { class: 'error', text: s.error }) : null));
  $('#mcp-list').replaceChildren(...(rows.length ? rows : [h('li', { class: 'empty', text: 'No MCP servers configured' })]));
}

function firstParagraph(text) {
  const p = String(text).split(/\n\s*\n/)[0];
  return p.length > 400 ? `${p.slice(0, 400)}…` : p;
}
