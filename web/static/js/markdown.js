// A small Markdown reader for datasheets: headings, pipe tables (with their
// column alignment), fenced code blocks, bullet and numbered lists and
// paragraphs, with `code`, **bold** and [links](https://…) inline. parse()
// is pure (tested in node); render() builds DOM nodes with h(), so every
// character of the input ends up as text, never as markup.

import { h } from './dom.js';

/** parse turns Markdown into blocks: {type: 'heading'|'table'|'code'|'list'|'paragraph', …}. */
export function parse(md) {
  const lines = String(md ?? '').replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let para = [];
  const flush = () => {
    if (para.length) blocks.push({ type: 'paragraph', text: para.join(' ') });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(`{3,}|~{3,})\s*([\w+-]*)\s*$/);
    if (fence) {
      flush();
      const body = [];
      let j = i + 1;
      while (j < lines.length && !lines[j].trim().startsWith(fence[1])) body.push(lines[j++]);
      blocks.push({ type: 'code', lang: fence[2] || '', text: body.join('\n') });
      i = j; // the closing fence (or the end)
      continue;
    }
    const head = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (head) {
      flush();
      blocks.push({ type: 'heading', level: head[1].length, text: head[2] });
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && isSeparator(lines[i + 1])) {
      flush();
      const header = cells(line);
      const align = cells(lines[i + 1]).map((c) => (/^:-+:$/.test(c) ? 'center' : /-:$/.test(c) ? 'right' : /^:-/.test(c) ? 'left' : ''));
      const rows = [];
      let j = i + 2;
      while (j < lines.length && /^\s*\|/.test(lines[j])) rows.push(cells(lines[j++]));
      blocks.push({ type: 'table', header, align, rows });
      i = j - 1;
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const last = blocks.at(-1);
      if (last?.type === 'list' && last.ordered === ordered && last.open) last.items.push(item[2]);
      else blocks.push({ type: 'list', ordered, items: [item[2]], open: true });
      continue;
    }
    if (!line.trim()) {
      flush();
      const last = blocks.at(-1);
      if (last?.type === 'list') last.open = false;
      continue;
    }
    const last = blocks.at(-1);
    if (!para.length && last?.type === 'list' && last.open && /^\s+\S/.test(line)) {
      last.items[last.items.length - 1] += ' ' + line.trim(); // a continued list item
      continue;
    }
    para.push(line.trim());
  }
  flush();
  for (const b of blocks) delete b.open;
  return blocks;
}

function isSeparator(line) {
  const cs = cells(line);
  return cs.length > 0 && cs.every((c) => /^:?-{1,}:?$/.test(c));
}

/** cells splits a table row on unescaped pipes, dropping the outer ones. */
export function cells(line) {
  const out = [];
  let cur = '';
  let code = false;
  const s = line.trim();
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '`') {
      code = !code;
      cur += c;
    } else if (c === '|' && !code) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  if (s.startsWith('|')) out.shift();
  if (s.endsWith('|') && !s.endsWith('\\|')) out.pop();
  return out.map((c) => c.trim());
}

/** inline splits text into runs: {text} | {code} | {strong} | {em} | {link, href}. */
export function inline(text) {
  const out = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|(?<![\w*])\*([^*\s][^*]*)\*(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push({ text: text.slice(at, m.index) });
    if (m[1] !== undefined) out.push({ code: m[1] });
    else if (m[2] !== undefined) out.push({ strong: m[2] });
    else if (m[3] !== undefined) out.push({ em: m[3] });
    else if (safeHref(m[5])) out.push({ link: m[4], href: m[5] });
    else out.push({ text: m[0] });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at) });
  return out;
}

/** Only web links and same-site paths become links (no javascript:, data:, …). */
export function safeHref(u) {
  return /^(https?:\/\/|\/(?!\/)|#)/i.test(u);
}

function runs(text) {
  return inline(text).map((r) => {
    if (r.code !== undefined) return h('code', {}, r.code);
    if (r.strong !== undefined) return h('strong', {}, r.strong);
    if (r.em !== undefined) return h('em', {}, r.em);
    if (r.link !== undefined) return h('a', { href: r.href, rel: 'noopener noreferrer' }, r.link);
    return r.text;
  });
}

/**
 * render builds the Markdown as a div of elements. Headings are shifted by
 * `shift` levels (a datasheet's "#" under the page's h1 and a card's h2).
 */
export function render(md, { shift = 0, cls = 'markdown' } = {}) {
  return h('div', { class: cls }, parse(md).map((b) => {
    switch (b.type) {
      case 'heading': return h(`h${Math.min(6, b.level + shift)}`, {}, runs(b.text));
      case 'code': return h('pre', { class: 'code', tabindex: 0, 'data-lang': b.lang || undefined }, h('code', {}, b.text));
      case 'list': return h(b.ordered ? 'ol' : 'ul', {}, b.items.map((t) => h('li', {}, runs(t))));
      case 'table': {
        const cell = (tag, text, i, attrs = {}) => h(tag, { ...attrs, class: b.align[i] === 'right' ? 'num' : b.align[i] === 'center' ? 'center' : undefined }, runs(text));
        const empty = b.header.every((c) => !c);
        return h('div', { class: 'table-wrap' }, h('table', { class: 'compact' },
          empty ? null : h('thead', {}, h('tr', {}, b.header.map((c, i) => cell('th', c, i, { scope: 'col' })))),
          h('tbody', {}, b.rows.map((r) => h('tr', {}, b.header.map((_, i) => (empty && i === 0
            ? cell('th', r[i] ?? '', i, { scope: 'row' })
            : cell('td', r[i] ?? '', i))))))));
      }
      default: return h('p', {}, runs(b.text));
    }
  }));
}
