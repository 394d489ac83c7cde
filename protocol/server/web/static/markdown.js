// A small, safe Markdown renderer: the source is HTML-escaped first, then
// the markup this client knows is added. Links are kept only for http(s).
// It tolerates half-written input (an unclosed fence renders as code), so a
// streaming message can be re-rendered on every chunk.

import { escapeHTML } from './util.js';

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const HR = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

const indentOf = (l) => l.match(/^\s*/)[0].length;
const blank = (l) => !l.trim();

/** Renders Markdown source to an HTML string that is safe to assign to innerHTML. */
export function renderMarkdown(src) {
  const lines = String(src).replace(/\u0000/g, '').replace(/\r\n?/g, '\n').split('\n');
  return blocks(lines, false);
}

function startsBlock(l, next) {
  return FENCE.test(l) || HEADING.test(l) || HR.test(l) || QUOTE.test(l) || LIST.test(l) ||
    (l.includes('|') && next !== undefined && TABLE_SEP.test(next) && next.includes('-'));
}

function blocks(lines, tight) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i];
    let m;
    if (blank(l)) { i++; continue; }
    if ((m = FENCE.exec(l))) {
      const [, ind, fence, lang] = m;
      const body = [];
      for (i++; i < lines.length; i++) {
        const t = lines[i].trim();
        if (t.startsWith(fence[0].repeat(fence.length)) && !t.replace(/[`~]/g, '')) { i++; break; }
        body.push(lines[i].startsWith(ind) ? lines[i].slice(ind.length) : lines[i].trimStart());
      }
      out.push(codeBlock(lang, body.join('\n')));
      continue;
    }
    if ((m = HEADING.exec(l))) {
      const n = m[1].length;
      out.push(`<h${n}>${inline(m[2])}</h${n}>`);
      i++;
      continue;
    }
    if (HR.test(l)) { out.push('<hr>'); i++; continue; }
    if (QUOTE.test(l)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(lines[i++].replace(QUOTE, ''));
      out.push(`<blockquote>${blocks(inner, false)}</blockquote>`);
      continue;
    }
    if (l.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, out);
      continue;
    }
    if (LIST.test(l)) { i = list(lines, i, out); continue; }
    const para = [];
    while (i < lines.length && !blank(lines[i]) && (para.length === 0 || !startsBlock(lines[i], lines[i + 1]))) {
      para.push(lines[i++].trim());
    }
    const html = para.map(inline).join('<br>');
    out.push(tight ? html : `<p>${html}</p>`);
  }
  return out.join('\n');
}

function list(lines, i, out) {
  const first = LIST.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = LIST.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = m[1].length + m[2].length + 1;
    const body = [m[3]];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (blank(l)) {
        let j = i + 1;
        while (j < lines.length && blank(lines[j])) j++;
        if (j < lines.length && indentOf(lines[j]) > indent) { body.push(''); loose = true; continue; }
        break;
      }
      if (indentOf(l) > indent) { body.push(l.slice(Math.min(contentIndent, indentOf(l)))); continue; }
      if (startsBlock(l, lines[i + 1])) break;
      body.push(l.trim()); // lazy continuation of the item's paragraph
    }
    items.push(body);
    // A blank line between items makes the list loose.
    if (i < lines.length && blank(lines[i])) {
      let j = i;
      while (j < lines.length && blank(lines[j])) j++;
      const n = j < lines.length ? LIST.exec(lines[j]) : null;
      if (n && n[1].length === indent && /\d/.test(n[2]) === ordered) { loose = true; i = j; }
    }
  }
  const lis = items.map((body) => {
    let html = blocks(body, !loose);
    const task = /^\[([ xX])\]\s+/.exec(body[0]);
    if (task) {
      html = html.replace(/\[[ xX]\]\s+/, '');
      html = `<input type="checkbox" disabled${task[1] === ' ' ? '' : ' checked'} aria-label="task"> ${html}`;
    }
    return `<li>${html}</li>`;
  });
  const tag = ordered ? 'ol' : 'ul';
  out.push(`<${tag}${ordered && start !== 1 ? ` start="${start}"` : ''}>${lis.join('')}</${tag}>`);
  return i;
}

function cells(line) {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function table(lines, i, out) {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'al-c' : 'al-r') : ''));
  const cls = (k) => (align[k] ? ` class="${align[k]}"` : '');
  const rows = [];
  for (i += 2; i < lines.length && lines[i].includes('|') && !blank(lines[i]); i++) rows.push(cells(lines[i]));
  const th = head.map((c, k) => `<th${cls(k)}>${inline(c)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${head.map((_, k) => `<td${cls(k)}>${inline(r[k] || '')}</td>`).join('')}</tr>`);
  out.push(`<div class="table-wrap"><table><thead><tr>${th}</tr></thead><tbody>${trs.join('')}</tbody></table></div>`);
  return i;
}

function link(url, labelHTML) {
  return `<a href="${url}" target="_blank" rel="noopener noreferrer">${labelHTML}</a>`;
}

/** Inline markup of one escaped line: code spans, links, emphasis. */
export function inline(text) {
  const stash = [];
  const keep = (html) => `\u0000${stash.push(html) - 1}\u0000`;
  let s = escapeHTML(text);
  s = s.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, __, code) => keep(`<code>${code.trim()}</code>`));
  s = s.replace(/!?\[([^\]]+)\]\(\s*(\S+?)(?:\s+&quot;.*?&quot;)?\s*\)/g, (all, label, url) =>
    (/^https?:\/\//i.test(url) ? keep(link(url, emphasis(label))) : emphasis(label)));
  s = s.replace(/&lt;(https?:\/\/[^\s&]+)&gt;/gi, (_, url) => keep(link(url, url)));
  s = s.replace(/\bhttps?:\/\/[^\s\u0000]+/gi, (m) => {
    // Stop before escaped quotes and brackets, and drop trailing punctuation.
    let url = m.split(/&quot;|&#39;|&lt;|&gt;/)[0];
    url = url.replace(/[.,:;!?)\]]+$/, '');
    return keep(link(url, url)) + m.slice(url.length);
  });
  s = emphasis(s);
  while (/\u0000\d+\u0000/.test(s)) s = s.replace(/\u0000(\d+)\u0000/g, (_, n) => stash[n]);
  return s;
}

function emphasis(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/g, '<strong>$1</strong>')
    .replace(/(?<![\w*])\*(?=[^\s*])([^*]*?[^\s*])\*(?![\w*])/g, '<em>$1</em>')
    .replace(/(?<![\w_])_(?=[^\s_])([^_]*?[^\s_])_(?![\w_])/g, '<em>$1</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}

// ---- code blocks and the highlighter ----

const C_COMMENT = String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/`;
const HASH_COMMENT = String.raw`(?<![\w$#{])#[^\n]*`;
const DQ = String.raw`"(?:\\.|[^\\"\n])*"`;
const SQ = String.raw`'(?:\\.|[^\\'\n])*'`;
const LANGS = {
  js: {
    kw: 'async await break case catch class const continue debugger default delete do else enum export extends ' +
      'false finally for from function if implements import in instanceof interface let new null of private ' +
      'protected public readonly return static super switch this throw true try type typeof undefined var void while yield as',
    com: C_COMMENT, str: String.raw`\x60(?:\\[\s\S]|[^\\\x60])*\x60|${DQ}|${SQ}`,
  },
  go: {
    kw: 'break case chan const continue default defer else fallthrough false for func go goto if import interface ' +
      'iota map nil package range return select struct switch true type var',
    com: C_COMMENT, str: String.raw`\x60[^\x60]*\x60|${DQ}|${SQ}`,
  },
  py: {
    kw: 'False None True and as assert async await break class continue def del elif else except finally for from ' +
      'global if import in is lambda nonlocal not or pass raise return self try while with yield',
    com: HASH_COMMENT, str: String.raw`"""[\s\S]*?"""|'''[\s\S]*?'''|${DQ}|${SQ}`,
  },
  sh: {
    kw: 'case cd do done echo elif else esac exit export fi for function if in local return set shift then unset until while',
    com: HASH_COMMENT, str: String.raw`"(?:\\.|[^\\"])*"|'[^']*'`,
  },
  json: { kw: 'false null true', com: '', str: DQ },
};
const ALIAS = {
  javascript: 'js', mjs: 'js', cjs: 'js', jsx: 'js', ts: 'js', tsx: 'js', typescript: 'js',
  golang: 'go', python: 'py', py3: 'py', bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', jsonc: 'json',
};
const compiled = {};

function grammar(lang) {
  const key = ALIAS[lang] || lang;
  const g = LANGS[key];
  if (!g) return null;
  if (!compiled[key]) {
    const parts = [g.com || '(?!)', g.str, String.raw`\b(?:0[xX][\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b`, String.raw`[A-Za-z_$][\w$]*`];
    compiled[key] = { re: new RegExp(parts.map((p) => `(${p})`).join('|'), 'g'), kw: new Set(g.kw.split(' ')) };
  }
  return compiled[key];
}

/** Escapes code and wraps comments, strings, numbers and keywords in spans. */
export function highlight(code, lang) {
  const g = grammar(String(lang).toLowerCase());
  if (!g) return escapeHTML(code);
  let out = '';
  let last = 0;
  g.re.lastIndex = 0;
  for (let m; (m = g.re.exec(code));) {
    if (m[0] === '') { g.re.lastIndex++; continue; }
    out += escapeHTML(code.slice(last, m.index));
    const cls = m[1] ? 'tk-c' : m[2] ? 'tk-s' : m[3] ? 'tk-n' : g.kw.has(m[4]) ? 'tk-k' : '';
    out += cls ? `<span class="${cls}">${escapeHTML(m[0])}</span>` : escapeHTML(m[0]);
    last = m.index + m[0].length;
  }
  return out + escapeHTML(code.slice(last));
}

function codeBlock(lang, code) {
  const l = escapeHTML(lang.toLowerCase());
  return `<pre${l ? ` data-lang="${l}"` : ''}><button type="button" class="copy" aria-label="Copy code">Copy</button>` +
    `<code${l ? ` class="language-${l}"` : ''}>${highlight(code, lang)}</code></pre>`;
}
