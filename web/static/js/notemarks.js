// What the annotation and adjudication views share: a note drawn with its
// spans as marks (rebuilt whole when its spans change: a 20,000-character
// note with 300 spans draws in a few milliseconds), the code point offsets
// of a text selection, a key for each type of a tag set, the timing of a
// keystroke to the frame that shows it, and the card listing a view's keys.

import { h, card } from './dom.js';

/**
 * drawNote renders text (with its code point index idx) as a pre.note, each
 * stretch covered by items ({start, end}) wrapped by mark(item, text, first)
 * where item is the shortest covering one; first tells the item's first
 * stretch (for ids and focus). One sweep over the items sorted by start:
 * a keystroke redraws a long note well within a frame.
 */
export function drawNote(text, idx, items, mark) {
  const n = idx.length - 1;
  const clamp = (x) => Math.max(0, Math.min(x, n));
  const cuts = new Set([0, n]);
  for (const it of items) {
    cuts.add(clamp(it.start));
    cuts.add(clamp(it.end));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const byStart = items.filter((it) => it.start < it.end).sort((a, b) => a.start - b.start);
  const out = [];
  const seen = new Set();
  let active = [];
  let next = 0;
  let pos = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i];
    active = active.filter((it) => it.end > a);
    while (next < byStart.length && byStart[next].start <= a) {
      if (byStart[next].end > a) active.push(byStart[next]);
      next++;
    }
    if (!active.length) continue;
    const it = active.reduce((x, y) => (y.end - y.start < x.end - x.start ? y : x));
    const b = points[i + 1];
    if (a > pos) out.push(text.slice(idx[pos], idx[a]));
    out.push(mark(it, text.slice(idx[a], idx[b]), !seen.has(it)));
    seen.add(it);
    pos = b;
  }
  out.push(text.slice(idx[pos]));
  return h('pre', { class: 'note', id: 'note-text', tabindex: '-1' }, out);
}

/** selectionIn gives the user's text selection inside el as code point offsets {start, end}, or null. */
export function selectionIn(el) {
  const sel = getSelection();
  if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
  const r = sel.getRangeAt(0);
  if (!el.contains(r.startContainer) || !el.contains(r.endContainer)) return null;
  const at = (node, off) => {
    const pre = document.createRange();
    pre.setStart(el, 0);
    pre.setEnd(node, off);
    return [...pre.toString()].length;
  };
  const start = at(r.startContainer, r.startOffset);
  const end = at(r.endContainer, r.endOffset);
  return end > start ? { start, end } : null;
}

/** trim moves {start, end} inward past white space of chars (the note's code points). */
export function trim({ start, end }, chars) {
  while (start < end && /\s/.test(chars[start])) start++;
  while (end > start && /\s/.test(chars[end - 1])) end--;
  return end > start ? { start, end } : null;
}

// Keys for types: digits, then letters the views leave free (j k n p u x d
// a are commands).
const TYPE_KEYS = '1234567890bcefghilmoqrstvwyz';

/** typeKeys gives [{key, type, category}] for a tag set's types (those past the keys get none). */
export function typeKeys(categories) {
  const out = [];
  for (const c of categories) for (const t of c.types) out.push({ key: TYPE_KEYS[out.length] || '', type: t, category: c.name });
  return out;
}

/** typing tells whether a key event belongs to a form control or carries a shortcut modifier. */
export function typing(e) {
  const t = e.target;
  return e.ctrlKey || e.metaKey || e.altKey || Boolean(t && (t.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(t.tagName)));
}

/**
 * timeKey, called as a key handler ends, records on el how long the last
 * keystroke took: its handler (data-key-handler-ms) and from the handler's
 * start to the frame after the one that paints its change (data-key-ms);
 * data-keys counts them.
 */
export function timeKey(el, t0) {
  el.dataset.keyHandlerMs = (performance.now() - t0).toFixed(2);
  requestAnimationFrame(() => setTimeout(() => {
    el.dataset.keyMs = (performance.now() - t0).toFixed(2);
    el.dataset.keys = String(Number(el.dataset.keys || 0) + 1);
  }, 0));
}

/** keysCard lists a view's keys: rows of [key, what it does]. */
export function keysCard(rows) {
  return card('Keys', h('dl', { class: 'keys' }, rows.map(([k, what]) => [h('dt', {}, h('kbd', {}, k)), h('dd', {}, what)])));
}

