// Hand-written SVG charts. Every bar carries its label and numbers as text
// (and in data- attributes and an aria-label), so the numbers can be read
// by people, screen readers and tests alike, and the chart prints.

import { s, h, fmt } from './dom.js';

/**
 * barChart draws horizontal bars: total as the bar, unique (if given) as a
 * darker inner bar. data: [{label, value, unique?, color?, group?, href?}].
 * A bar with href is a link (focusable). Returns a <figure>.
 */
export function barChart({ id, title, data, unit = 'spans', labelWidth, showUnique = true }) {
  const rowH = 22;
  const gap = 6;
  const width = 640;
  // 12px labels, mostly capitals: about 8.5px a character.
  const lw = labelWidth ?? Math.min(240, Math.max(70, 14 + 8.5 * Math.max(0, ...data.map((d) => String(d.label).length))));
  const valueW = showUnique ? 120 : 60;
  const barW = width - lw - valueW - 16;
  const max = Math.max(1, ...data.map((d) => d.value));
  const height = data.length * (rowH + gap) + gap;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart', role: 'img',
    'aria-label': `${title}: ` + data.map((d) => `${d.label} ${fmt.format(d.value)}`).join(', '),
  });
  data.forEach((d, i) => {
    const y = gap + i * (rowH + gap);
    const w = Math.max(1, (d.value / max) * barW);
    const color = d.color || '#3d7dd8';
    const g = s('g', { class: 'bar', 'data-label': d.label, 'data-value': d.value, 'data-unique': d.unique ?? undefined });
    g.append(
      s('title', {}, `${d.label}: ${fmt.format(d.value)} ${unit}${d.unique !== undefined ? `, ${fmt.format(d.unique)} unique` : ''}`),
      s('text', { x: lw - 8, y: y + rowH / 2, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'central' }, d.label),
      s('rect', { x: lw, y, width: w, height: rowH, rx: 3, fill: color, 'fill-opacity': showUnique && d.unique !== undefined ? 0.45 : 0.9 }),
      showUnique && d.unique !== undefined
        ? s('rect', { x: lw, y: y + 5, width: Math.max(1, (d.unique / max) * barW), height: rowH - 10, rx: 2, fill: color })
        : null,
      s('text', { x: lw + w + 6, y: y + rowH / 2, class: 'value', 'dominant-baseline': 'central' },
        fmt.format(d.value), showUnique && d.unique !== undefined ? s('tspan', { class: 'unique' }, ` (${fmt.format(d.unique)})`) : null),
    );
    svg.append(d.href ? s('a', { href: d.href, 'aria-label': `${d.label}: ${d.value}` }, g) : g);
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id },
    h('figcaption', {}, title, showUnique ? h('span', { class: 'key' }, ' · bar: total, inner bar and (n): unique') : null),
    data.length ? h('div', { class: 'chart-scroll' }, svg) : h('p', { class: 'empty' }, 'No spans.'));
}

/**
 * timeline draws a patient's notes on one line: by creation time if every
 * note has one, else evenly in record order. notes: [{label, when?, href, title, color}].
 */
export function timeline({ notes, title }) {
  const width = 900;
  const height = 86;
  const pad = 40;
  const times = notes.map((n) => (n.when ? new Date(n.when).getTime() : NaN));
  const dated = times.every((t) => !Number.isNaN(t)) && new Set(times).size > 1;
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const x = (i) => (notes.length === 1 ? width / 2
    : dated ? pad + ((times[i] - t0) / (t1 - t0)) * (width - 2 * pad)
      : pad + (i / (notes.length - 1)) * (width - 2 * pad));
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'timeline', role: 'group', 'aria-label': title });
  svg.append(s('line', { x1: pad - 20, x2: width - pad + 20, y1: 36, y2: 36, class: 'axis' }));
  notes.forEach((n, i) => {
    const cx = x(i);
    svg.append(s('a', { href: n.href, 'aria-label': n.title },
      s('title', {}, n.title),
      s('circle', { cx, cy: 36, r: 13, fill: n.color || '#1f3a5f', class: 'note-dot' }),
      s('text', { x: cx, y: 36, class: 'dot-label', 'text-anchor': 'middle', 'dominant-baseline': 'central' }, n.label),
      s('text', { x: cx, y: 68, class: 'dot-caption', 'text-anchor': 'middle' }, n.caption || '')));
  });
  return h('figure', { class: 'timeline-fig' }, h('figcaption', {}, title, dated ? ' (by note date)' : ' (in record order)'), svg);
}
