// Comparison of two annotation layers of one document, span by span, with
// the error taxonomy of Yeniterzi et al. 2010 as the spec states it:
// missed, spurious, tag-clash (same offsets, other type), span-clash (same
// type, other offsets), both-clash (other offsets and type). Pure functions
// on plain spans {start, end, category, type}, so node --test checks them.

/**
 * compare pairs each reference span with the compared ("hypothesis") spans
 * that overlap it. A reference span takes an exact-offset partner first,
 * else the overlapping one it shares most characters with; every other
 * overlapping hypothesis span is consumed too (one long system span over
 * two gold spans is one clash, not a clash and a spurious).
 * Returns {items, counts}: items are {kind, ref, hyp} in text order.
 */
export function compare(ref, hyp) {
  const refs = [...ref].sort(byStart);
  const hyps = [...hyp].sort(byStart);
  const used = new Set();
  const items = [];
  for (const r of refs) {
    const over = hyps.filter((x) => x.start < r.end && r.start < x.end);
    if (!over.length) {
      items.push({ kind: 'missed', ref: r, hyp: null });
      continue;
    }
    let best = over.find((x) => x.start === r.start && x.end === r.end && !used.has(x));
    best ??= over.reduce((a, b) => (overlap(b, r) > overlap(a, r) ? b : a));
    for (const x of over) used.add(x);
    const sameSpan = best.start === r.start && best.end === r.end;
    const sameType = best.type === r.type && best.category === r.category;
    const kind = sameSpan ? (sameType ? 'match' : 'tag-clash') : sameType ? 'span-clash' : 'both-clash';
    items.push({ kind, ref: r, hyp: best });
  }
  for (const x of hyps) if (!used.has(x)) items.push({ kind: 'spurious', ref: null, hyp: x });
  items.sort((a, b) => start(a) - start(b) || (a.ref ? -1 : 1));
  const counts = { match: 0, missed: 0, spurious: 0, 'tag-clash': 0, 'span-clash': 0, 'both-clash': 0 };
  for (const it of items) counts[it.kind]++;
  return { items, counts };
}

const byStart = (a, b) => a.start - b.start || a.end - b.end;
const overlap = (a, b) => Math.min(a.end, b.end) - Math.max(a.start, b.start);
const start = (it) => Math.min(it.ref ? it.ref.start : Infinity, it.hyp ? it.hyp.start : Infinity);

/**
 * segments cuts [0, length) at every boundary of the given layers and tells,
 * per piece, which entries of each layer cover it. layers is an array of
 * arrays of {start, end, ...}; the result is [{start, end, cover: [[...], ...]}]
 * with one cover list per layer, only for the pieces that some entry covers
 * (plain text between them is left to the caller).
 */
export function segments(length, layers) {
  const cuts = new Set([0, length]);
  for (const layer of layers) for (const e of layer) {
    cuts.add(clamp(e.start, length));
    cuts.add(clamp(e.end, length));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i];
    const b = points[i + 1];
    const cover = layers.map((layer) => layer.filter((e) => e.start <= a && e.end >= b && e.start < e.end));
    if (cover.some((c) => c.length)) out.push({ start: a, end: b, cover });
  }
  return out;
}

const clamp = (x, n) => Math.max(0, Math.min(x, n));

/**
 * codePointIndex maps code point offsets (the API's, as i2b2 counts them)
 * to JavaScript string (UTF-16) offsets: result[cp] is the UTF-16 index.
 */
export function codePointIndex(text) {
  const idx = [0];
  let u = 0;
  for (const ch of text) {
    u += ch.length;
    idx.push(u);
  }
  return idx;
}
