// Hand-written SVG charts. Every bar carries its label and numbers as text
// (and in data- attributes and an aria-label), so the numbers can be read
// by people, screen readers and tests alike, and the chart prints.

import { s, h, fmt } from './dom.js';

let measure; // a canvas context, made on first use

/**
 * textWidth is the width in pixels of the widest of labels, written at px
 * pixels in the page's font: measured, so that no label is cut (MEDDOCAN's
 * IDENTIF_VEHICULOS_NRSERIE_PLACAS is thirty-two capitals).
 */
export function textWidth(labels, px) {
  measure ??= document.createElement('canvas').getContext('2d');
  measure.font = `${px}px ${getComputedStyle(document.body).fontFamily}`;
  return Math.ceil(Math.max(0, ...labels.map((l) => measure.measureText(String(l)).width)));
}

/**
 * barChart draws horizontal bars: total as the bar, unique (if given) as a
 * darker inner bar. data: [{label, value, unique?, color?, group?, href?}].
 * A bar with href is a link (focusable). Returns a <figure>.
 */
export function barChart({ id, title, data, unit = 'spans', labelWidth, showUnique = true, max: maxValue, format = (v) => fmt.format(v), key }) {
  const rowH = 22;
  const gap = 6;
  const width = 640;
  const lw = labelWidth ?? Math.min(320, Math.max(70, 14 + textWidth(data.map((d) => d.label), 12)));
  const valueW = showUnique ? 120 : 60;
  const barW = width - lw - valueW - 16;
  const max = maxValue ?? Math.max(1, ...data.map((d) => d.value));
  const height = data.length * (rowH + gap) + gap;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart', role: 'img',
    'aria-label': `${title}: ` + data.map((d) => `${d.label} ${format(d.value)}`).join(', '),
  });
  data.forEach((d, i) => {
    const y = gap + i * (rowH + gap);
    const w = Math.max(1, (d.value / max) * barW);
    const color = d.color || '#3d7dd8';
    const g = s('g', { class: 'bar', 'data-label': d.label, 'data-value': d.value, 'data-unique': d.unique ?? undefined });
    g.append(
      s('title', {}, d.title || `${d.label}: ${format(d.value)} ${unit}${d.unique !== undefined ? `, ${fmt.format(d.unique)} unique` : ''}`),
      s('text', { x: lw - 8, y: y + rowH / 2, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'central' }, d.label),
      s('rect', { x: lw, y, width: w, height: rowH, rx: 3, fill: color, 'fill-opacity': showUnique && d.unique !== undefined ? 0.45 : 0.9 }),
      showUnique && d.unique !== undefined
        ? s('rect', { x: lw, y: y + 5, width: Math.max(1, (d.unique / max) * barW), height: rowH - 10, rx: 2, fill: color })
        : null,
      s('text', { x: lw + w + 6, y: y + rowH / 2, class: 'value', 'dominant-baseline': 'central' },
        format(d.value), showUnique && d.unique !== undefined ? s('tspan', { class: 'unique' }, ` (${fmt.format(d.unique)})`) : null),
    );
    svg.append(d.href ? s('a', { href: d.href, 'aria-label': `${d.label}: ${d.value}` }, g) : g);
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id },
    h('figcaption', {}, title, key ? h('span', { class: 'key' }, ` · ${key}`) : showUnique ? h('span', { class: 'key' }, ' · bar: total, inner bar and (n): unique') : null),
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

/**
 * heatmap draws a confusion matrix: rows and columns labelled, each cell
 * shaded by its count (log scale), the diagonal in one hue and errors in
 * another, every non-zero count written in its cell. cells[r][c];
 * diagonal(r, c) says which cells are agreement. Returns a <figure>.
 */
export function heatmap({ id, title, rows, cols, cells, diagonal = (r, c) => r === c, rowTitle = 'rows', colTitle = 'columns' }) {
  const cell = 30;
  const lw = 16 + textWidth(rows, 12);
  // Column labels slant up to the right at 55°: the tallest sets the top
  // margin, and those of the last columns may reach past the last cell.
  const slant = (55 * Math.PI) / 180;
  const colW = cols.map((c) => textWidth([c], 11));
  const th = 18 + Math.ceil(Math.sin(slant) * Math.max(0, ...colW));
  const past = Math.max(0, ...colW.map((w, j) => (j + 0.5) * cell + Math.cos(slant) * w - cols.length * cell));
  const width = lw + cols.length * cell + 8 + Math.ceil(past);
  const height = th + rows.length * cell + 8;
  const max = Math.max(1, ...cells.flat());
  const shade = (v) => (v ? 0.15 + 0.85 * (Math.log1p(v) / Math.log1p(max)) : 0);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart heatmap', role: 'img',
    'aria-label': `${title}; ${rowTitle} by ${colTitle}. The table below has the same numbers.`,
  });
  cols.forEach((c, j) => {
    const x = lw + j * cell + cell / 2;
    svg.append(s('text', { x, y: th - 6, class: 'col-label', transform: `rotate(-55 ${x} ${th - 6})` }, c));
  });
  rows.forEach((r, i) => {
    const y = th + i * cell;
    svg.append(s('text', { x: lw - 6, y: y + cell / 2, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'central' }, r));
    cols.forEach((c, j) => {
      const v = cells[i]?.[j] ?? 0;
      const x = lw + j * cell;
      const diag = diagonal(i, j);
      const a = shade(v);
      const g = s('g', { class: 'cell', 'data-row': r, 'data-col': c, 'data-value': v },
        s('title', {}, `${rowTitle} ${r}, ${colTitle} ${c}: ${fmt.format(v)}`),
        s('rect', { x: x + 1, y: y + 1, width: cell - 2, height: cell - 2, rx: 2,
          class: v ? (diag ? 'hit' : 'miss') : 'zero', 'fill-opacity': v ? a : 1 }),
        v ? s('text', { x: x + cell / 2, y: y + cell / 2, 'text-anchor': 'middle', 'dominant-baseline': 'central',
          class: a > 0.55 ? 'count light' : 'count' }, v > 999 ? `${Math.round(v / 100) / 10}k` : String(v)) : null);
      svg.append(g);
    });
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id },
    h('figcaption', {}, title, h('span', { class: 'key' },
      ' · ', h('span', { class: 'swatch hit', 'aria-hidden': 'true' }), 'agreement ',
      h('span', { class: 'swatch miss', 'aria-hidden': 'true' }), 'error; darker is more (log scale)')),
    h('div', { class: 'chart-scroll' }, svg));
}

/**
 * intervals draws confidence intervals on a 0..1 axis, one line per item:
 * [{label, low, high, point?, color?}]. Returns a <figure>.
 */
export function intervals({ id, title, data }) {
  const rowH = 22;
  const width = 640;
  const lw = Math.min(300, Math.max(80, 14 + textWidth(data.map((d) => d.label), 12)));
  const aw = width - lw - 30;
  const lo = Math.max(0, Math.floor(10 * Math.min(...data.map((d) => d.low))) / 10 - 0.05);
  const hi = Math.min(1, Math.ceil(10 * Math.max(...data.map((d) => d.high))) / 10);
  const X = (v) => lw + ((v - lo) / Math.max(1e-9, hi - lo)) * aw;
  const height = data.length * rowH + 30;
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart intervals', role: 'img',
    'aria-label': `${title}: ` + data.map((d) => `${d.label} ${d.low.toFixed(3)} to ${d.high.toFixed(3)}`).join(', ') });
  for (let t = Math.ceil(lo * 10) / 10; t <= hi + 1e-9; t += 0.1) {
    svg.append(s('line', { x1: X(t), x2: X(t), y1: 4, y2: height - 22, class: 'grid' }),
      s('text', { x: X(t), y: height - 6, 'text-anchor': 'middle', class: 'tick' }, t.toFixed(1)));
  }
  data.forEach((d, i) => {
    const y = 8 + i * rowH + rowH / 2;
    svg.append(s('g', { class: 'interval', 'data-label': d.label, 'data-low': d.low, 'data-high': d.high },
      s('title', {}, `${d.label}: ${d.low.toFixed(4)} – ${d.high.toFixed(4)}`),
      s('text', { x: lw - 8, y, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'central' }, d.label),
      s('line', { x1: X(d.low), x2: X(d.high), y1: y, y2: y, stroke: d.color || '#1f3a5f', 'stroke-width': 4, 'stroke-linecap': 'round' }),
      d.point !== undefined ? s('circle', { cx: X(d.point), cy: y, r: 4.5, fill: '#fff', stroke: d.color || '#1f3a5f', 'stroke-width': 2 }) : null));
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id }, h('figcaption', {}, title), h('div', { class: 'chart-scroll' }, svg));
}

/**
 * groupedBars draws two bars per group (A above B), each as a share of its
 * corpus (0..1), with the count written beside it. data: [{label, a, b,
 * aCount, bCount, highlight?, title?}]. Highlighted groups get a marker and
 * the class "highlight". Returns a <figure>.
 */
export function groupedBars({ id, title, data, names = ['A', 'B'], colors = ['#5c80bc', '#c1502e'] }) {
  const barH = 11;
  const rowH = 2 * barH + 10;
  const width = 640;
  const lw = Math.min(300, Math.max(80, 14 + textWidth(data.map((d) => d.label), 12)));
  const barW = width - lw - 130;
  const max = Math.max(1e-9, ...data.flatMap((d) => [d.a, d.b]));
  const height = data.length * rowH + 6;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart grouped', role: 'img',
    'aria-label': `${title}: ` + data.map((d) => `${d.label} ${names[0]} ${(100 * d.a).toFixed(1)}%, ${names[1]} ${(100 * d.b).toFixed(1)}%`).join('; '),
  });
  data.forEach((d, i) => {
    const y = 4 + i * rowH;
    const g = s('g', { class: d.highlight ? 'group highlight' : 'group', 'data-label': d.label, 'data-a': d.a, 'data-b': d.b,
      'data-highlight': d.highlight ? 'true' : undefined });
    g.append(s('title', {}, d.title || `${d.label}: ${names[0]} ${(100 * d.a).toFixed(2)}%, ${names[1]} ${(100 * d.b).toFixed(2)}%`));
    if (d.highlight) g.append(s('rect', { x: 0, y: y - 2, width, height: rowH - 4, rx: 4, class: 'highlight-band' }));
    g.append(s('text', { x: lw - 8, y: y + barH, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'central' },
      d.highlight ? `▲ ${d.label}` : d.label));
    [[d.a, d.aCount, 0], [d.b, d.bCount, 1]].forEach(([v, n, k]) => {
      const by = y + k * (barH + 1);
      const w = Math.max(1, (v / max) * barW);
      g.append(
        s('rect', { x: lw, y: by, width: w, height: barH, rx: 2, fill: colors[k], class: `bar-${k ? 'b' : 'a'}` }),
        s('text', { x: lw + w + 5, y: by + barH / 2, class: 'value', 'dominant-baseline': 'central' },
          `${(100 * v).toFixed(1)}%${n !== undefined ? ` (${fmt.format(n)})` : ''}`));
    });
    svg.append(g);
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id },
    h('figcaption', {}, title, h('span', { class: 'key' }, ' · ',
      h('span', { class: 'swatch', vars: { '--c': colors[0] }, 'aria-hidden': 'true' }), ` ${names[0]} `,
      h('span', { class: 'swatch', vars: { '--c': colors[1] }, 'aria-hidden': 'true' }), ` ${names[1]}; ▲ largest residuals`)),
    data.length ? h('div', { class: 'chart-scroll' }, svg) : h('p', { class: 'empty' }, 'No spans.'));
}

/**
 * prCurve draws precision against recall, one point per setting joined in
 * order, each labelled (e.g. by its recall bias): [{label, precision,
 * recall, f1, highlight?}]. Axes span the points' range. Returns a <figure>.
 */
export function prCurve({ id, title, data, key }) {
  const width = 640;
  const height = 360;
  const pad = { l: 56, r: 24, t: 16, b: 40 };
  const range = (vals) => {
    const lo = Math.max(0, Math.floor(20 * Math.min(...vals)) / 20);
    const hi = Math.min(1, Math.ceil(20 * Math.max(...vals)) / 20);
    return hi > lo ? [lo, hi] : [Math.max(0, lo - 0.05), Math.min(1, hi + 0.05)];
  };
  const [x0, x1] = range(data.map((d) => d.recall));
  const [y0, y1] = range(data.map((d) => d.precision));
  const X = (v) => pad.l + ((v - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const Y = (v) => height - pad.b - ((v - y0) / (y1 - y0)) * (height - pad.t - pad.b);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'chart pr-curve', role: 'img',
    'aria-label': `${title}: ` + data.map((d) => `${d.label}: precision ${d.precision.toFixed(4)}, recall ${d.recall.toFixed(4)}`).join('; ') });
  const ticks = (lo, hi) => Array.from({ length: Math.round((hi - lo) / 0.05) + 1 }, (_, i) => lo + 0.05 * i);
  for (const t of ticks(x0, x1)) {
    svg.append(s('line', { x1: X(t), x2: X(t), y1: pad.t, y2: height - pad.b, class: 'grid' }),
      s('text', { x: X(t), y: height - pad.b + 16, 'text-anchor': 'middle', class: 'tick' }, t.toFixed(2)));
  }
  for (const t of ticks(y0, y1)) {
    svg.append(s('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
      s('text', { x: pad.l - 6, y: Y(t), 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'tick' }, t.toFixed(2)));
  }
  svg.append(
    s('text', { x: (pad.l + width - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'label' }, 'recall'),
    s('text', { x: 14, y: (pad.t + height - pad.b) / 2, 'text-anchor': 'middle', class: 'label',
      transform: `rotate(-90 14 ${(pad.t + height - pad.b) / 2})` }, 'precision'),
    s('polyline', { points: data.map((d) => `${X(d.recall)},${Y(d.precision)}`).join(' '), fill: 'none', stroke: '#3d7dd8', 'stroke-width': 2 }));
  data.forEach((d) => {
    svg.append(s('g', { class: d.highlight ? 'point highlight' : 'point', 'data-label': d.label, 'data-precision': d.precision, 'data-recall': d.recall },
      s('title', {}, `${d.label}: P ${d.precision.toFixed(4)}, R ${d.recall.toFixed(4)}, F1 ${d.f1.toFixed(4)}`),
      s('circle', { cx: X(d.recall), cy: Y(d.precision), r: d.highlight ? 6 : 4.5, fill: d.highlight ? '#c1502e' : '#fff', stroke: '#1f3a5f', 'stroke-width': 2 }),
      s('text', { x: X(d.recall) + 8, y: Y(d.precision) - 8, class: 'value' }, d.label)));
  });
  return h('figure', { class: 'chart-fig', 'data-chart': id },
    h('figcaption', {}, title, key ? h('span', { class: 'key' }, ` · ${key}`) : null), h('div', { class: 'chart-scroll' }, svg));
}
