// Small DOM helpers: the dashboard builds its pages with h(), never with
// innerHTML, so text from the corpus (which may contain anything) is only
// ever text.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'vars') for (const [name, val] of Object.entries(v)) el.style.setProperty(name, val);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** h('a', {href: '#/'}, 'text', child, [more]) makes an HTML element. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** s('rect', {...}) makes an SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export const fmt = new Intl.NumberFormat('en-US');
export const num = (n) => (n === null || n === undefined ? '—' : fmt.format(n));
export const pct = (x) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`);
export const dec = (x, d = 1) => (x === null || x === undefined ? '—' : x.toFixed(d));

export function date(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(0, 10);
}

/** A hash link for the router: link(['corpus', name], {set}) -> #/corpus/name?set=… */
export function href(parts, query = {}) {
  const path = '#/' + parts.map((p) => encodeURIComponent(p)).join('/');
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/** A table from column specs [{label, value(row), num?: bool, cls?}] and rows. */
export function table(columns, rows, { caption, empty = 'Nothing here yet.', cls = '' } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' },
    h('table', { class: cls },
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : '' }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c, i) => {
        const v = c.value(r);
        const attrs = { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || undefined };
        return i === 0 && c.rowHeader !== false ? h('th', { scope: 'row', ...attrs }, v) : h('td', attrs, v);
      }))))));
}

/** A card: a titled section. */
export function card(title, ...children) {
  return h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...children);
}

/** The headline figures of a page. */
export function figures(items) {
  return h('dl', { class: 'figures' }, items.map(([label, value, hint]) =>
    h('div', { title: hint || undefined }, h('dt', {}, label), h('dd', {}, value))));
}

export function breadcrumbs(items) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    h('ol', {}, items.map(([label, link], i) => h('li', {},
      link && i < items.length - 1 ? h('a', { href: link }, label) : h('span', { 'aria-current': 'page' }, label)))));
}

let uid = 0;
/**
 * field labels a form control: a div.field with the label, the control (given
 * an id when it has none) and an optional hint (its id: the control's + "-hint").
 */
export function field(label, control, hint) {
  control.id ||= `f${++uid}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control,
    hint ? h('small', { class: 'muted', id: `${control.id}-hint` }, hint) : null);
}
