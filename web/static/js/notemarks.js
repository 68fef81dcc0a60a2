// What the annotation and adjudication views share: a note drawn with its
// spans as marks (line by line, redrawing only the lines that change), the code point offsets
// of a text selection, a key for each type of a tag set, the timing of a
// keystroke to the frame that shows it, and the card listing a view's keys.

import { h, card } from './dom.js';

/** note makes the empty pre.note that drawNote draws into. */
export function note() {
  return h('pre', { class: 'note', id: 'note-text', tabindex: '-1' });
}

const lineKeys = new WeakMap(); // a drawn line -> what it shows

/**
 * drawNote draws text (with its code point index idx) into pre, each
 * stretch covered by items ({start, end}) a mark with the attributes
 * attrs(item, first) gives, item being the shortest covering one and first
 * telling its first stretch (for ids). The note is drawn line by line, and
 * a line that shows what it showed before is left as it is: a keystroke
 * that moves one span redraws and lays out one line, not the note.
 */
export function drawNote(pre, text, idx, items, attrs) {
  const n = idx.length - 1;
  const clamp = (x) => Math.max(0, Math.min(x, n));
  const cuts = new Set([0, n]);
  for (const it of items) {
    cuts.add(clamp(it.start));
    cuts.add(clamp(it.end));
  }
  for (let i = 0, cp = 0; i < text.length; cp++) {
    if (text[i] === '\n') cuts.add(cp + 1);
    i += text.codePointAt(i) > 0xffff ? 2 : 1;
  }
  const points = [...cuts].sort((a, b) => a - b);
  const byStart = items.filter((it) => it.start < it.end).sort((a, b) => a.start - b.start);
  const lines = [[]];
  const seen = new Set();
  let active = [];
  let next = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i];
    const b = points[i + 1];
    active = active.filter((it) => it.end > a);
    while (next < byStart.length && byStart[next].start <= a) {
      if (byStart[next].end > a) active.push(byStart[next]);
      next++;
    }
    const s = text.slice(idx[a], idx[b]);
    if (active.length) {
      const it = active.reduce((x, y) => (y.end - y.start < x.end - x.start ? y : x));
      lines.at(-1).push({ s, attrs: attrs(it, !seen.has(it)) });
      seen.add(it);
    } else {
      lines.at(-1).push({ s });
    }
    if (s.endsWith('\n') && i + 2 < points.length) lines.push([]);
  }
  lines.forEach((pieces, i) => {
    const key = JSON.stringify(pieces);
    const old = pre.children[i];
    if (old && lineKeys.get(old) === key) return;
    const line = h('span', { class: 'line' }, pieces.map((p) => (p.attrs ? h('mark', p.attrs, p.s) : p.s)));
    lineKeys.set(line, key);
    if (old) old.replaceWith(line);
    else pre.append(line);
  });
  while (pre.children.length > lines.length) pre.lastElementChild.remove();
  return pre;
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

// Keys the views keep for commands (j k n p u x d a, the span's edges);
// a type's key is any other single character.
export const COMMAND_KEYS = new Set([...'jknpuxda[]{}']);

/**
 * typeKeys gives [{key, type, category}] for a tag set's types, each key
 * mnemonic where it can be: the type's first letter if free, else that
 * letter in upper case (Shift), else its next free letter (lower, then
 * upper case), then a digit; a type past all of them gets none. chosen ({type: key}), the keys a user set for this tag
 * set, come first where they are valid and free.
 */
export function typeKeys(categories, chosen = {}) {
  const all = [];
  for (const c of categories) for (const t of c.types) all.push({ key: '', type: t, category: c.name });
  const used = new Set(COMMAND_KEYS);
  for (const k of all) {
    const want = chosen[k.type];
    if (typeof want === 'string' && validTypeKey(want) && !used.has(want)) {
      k.key = want;
      used.add(want);
    }
  }
  for (const k of all) {
    if (k.key) continue;
    const letters = [...k.type.toLowerCase()].filter((ch) => /\p{Ll}/u.test(ch));
    const upper = letters.map((ch) => ch.toUpperCase());
    const candidates = [letters[0], upper[0], ...letters.slice(1), ...upper.slice(1), ...'1234567890'].filter(Boolean);
    k.key = candidates.find((ch) => !used.has(ch)) || '';
    if (k.key) used.add(k.key);
  }
  return all;
}

/** validTypeKey tells whether key may be a type's: one printable character that is no command. */
export function validTypeKey(key) {
  return [...key].length === 1 && /\S/u.test(key) && !COMMAND_KEYS.has(key);
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

