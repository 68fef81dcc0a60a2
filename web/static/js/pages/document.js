// #/corpus/:name/doc/:doc?set=&vs= — a note with one annotation set's spans
// highlighted by category, or two sets overlaid with each difference
// coloured by its error kind (the comparison is computed here, from the two
// sets' spans, by overlay.js).

import { gql, notFound } from '../api.js';
import { h, num, date, href, card, breadcrumbs, table } from '../dom.js';
import { categoryColor, ERROR_KINDS } from '../colors.js';
import { compare, segments, codePointIndex } from '../overlay.js';
import { can } from '../roles.js';
import { originalOf } from '../corpus-kind.js';

const SPAN = 'start end text category type comment';
const DOC = `query Document($corpus: String!, $doc: String!, $set: String!, $vs: String!, $compare: Boolean!) {
  documents(first: 1, where: {externalID: $doc, hasCorpusWith: {name: $corpus}}) {
    edges { node {
      id externalID recordOrder noteType created split charCount tokenCount text
      corpus { kind provenance annotationSets { name kind } }
      patient { externalID documents(orderBy: {field: RECORD_ORDER}) { edges { node { externalID recordOrder } } } }
      ref: annotations(set: $set) { ${SPAN} }
      hyp: annotations(set: $vs) @include(if: $compare) { ${SPAN} }
    } }
  }
}`;

export async function render({ params, query, signal, title }) {
  const { name, doc } = params;
  const set = query.set || 'gold';
  const vs = query.vs || '';
  title(`${doc} · ${name}`);
  const data = await gql(DOC, { corpus: name, doc, set, vs, compare: Boolean(vs) }, { signal });
  const d = data.documents.edges[0]?.node;
  if (!d) throw notFound(`Corpus “${name}” has no document “${doc}”.`);

  const sets = d.corpus.annotationSets || [];
  const siblings = d.patient.documents.edges.map((e) => e.node);
  const at = siblings.findIndex((x) => x.externalID === d.externalID);
  const go = (q) => { location.hash = href(['corpus', name, 'doc', doc], q); };
  const docLink = (x, rel) => (x ? h('a', { href: href(['corpus', name, 'doc', x.externalID], { set: query.set, vs: query.vs }), rel, class: 'button' },
    rel === 'prev' ? `← ${x.externalID}` : `${x.externalID} →`) : null);

  const controls = h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() },
    h('label', {}, vs ? 'Reference ' : 'Spans from ',
      h('select', { id: 'ref-set', onchange: (e) => go({ set: e.target.value, vs }) },
        sets.map((s) => h('option', { value: s.name, selected: s.name === set }, `${s.name} (${s.kind})`)))),
    h('label', {}, 'Compare with ',
      h('select', { id: 'cmp-set', onchange: (e) => go({ set, vs: e.target.value }) },
        h('option', { value: '', selected: !vs }, '— nothing —'),
        sets.filter((s) => s.name !== set).map((s) => h('option', { value: s.name, selected: s.name === vs }, `${s.name} (${s.kind})`)))));

  const view = vs ? overlayView(d, set, vs) : spansView(d, set);

  return h('div', { class: 'page doc-page' },
    breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name], { set: query.set })],
      [`Patient ${d.patient.externalID}`, href(['corpus', name, 'patient', d.patient.externalID], { set: query.set })], [d.externalID]]),
    h('div', { class: 'title-row' },
      h('h1', {}, d.externalID,
        h('span', { class: 'tag' }, d.split),
        d.noteType ? h('span', { class: 'tag' }, d.noteType) : null),
      h('div', { class: 'actions' },
        originalOf(d.corpus) && can('originalText')
          ? h('a', { class: 'button original-link', href: href(['corpus', name, 'doc', doc, 'original'], { set: query.set }) }, `Original (${originalOf(d.corpus)}) beside it`)
          : null,
        h('nav', { class: 'actions', 'aria-label': "The patient's other notes" }, docLink(siblings[at - 1], 'prev'), docLink(siblings[at + 1], 'next')))),
    h('p', { class: 'meta' },
      `Note ${d.recordOrder || '?'} of ${siblings.length} · ${num(d.tokenCount)} tokens · ${num(d.charCount)} characters`,
      d.created ? ` · written ${date(d.created)}` : ''),
    controls,
    h('div', { class: 'doc-layout' },
      h('div', { class: 'note-wrap' }, view.text),
      h('aside', { class: 'doc-side' }, view.side)));
}

/** markText renders text with pieces wrapped by mark(piece) where covered. */
export function markText(text, pieces, mark) {
  const idx = codePointIndex(text);
  const cp = (i) => idx[Math.min(i, idx.length - 1)];
  const out = [];
  let pos = 0;
  for (const p of pieces) {
    if (p.start > pos) out.push(text.slice(cp(pos), cp(p.start)));
    out.push(mark(p, text.slice(cp(p.start), cp(p.end))));
    pos = p.end;
  }
  out.push(text.slice(cp(pos)));
  return h('pre', { class: 'note', id: 'note-text', tabindex: '-1' }, out);
}

function focusMark(id) {
  const el = document.getElementById(id);
  if (!el) return;
  el.scrollIntoView({ block: 'center', behavior: 'smooth' });
  el.focus({ preventScroll: true });
}

function spansView(d, set) {
  const spans = d.ref.map((s, i) => ({ ...s, i }));
  const n = [...d.text].length;
  const firstSeg = new Set();
  const pieces = segments(n, [spans]).map((seg) => {
    const s = seg.cover[0][0];
    const first = !firstSeg.has(s.i);
    firstSeg.add(s.i);
    return { ...seg, span: s, first };
  });
  const text = markText(d.text, pieces, (p, t) => {
    const s = p.span;
    const tip = `${s.category} / ${s.type}${s.comment ? ' — ' + s.comment : ''}`;
    return h('mark', {
      class: 'phi', id: p.first ? `span-${s.i}` : undefined, tabindex: p.first ? '0' : undefined,
      'data-category': s.category, 'data-type': s.type, 'data-tip': tip,
      'aria-label': p.first ? `${s.text}: ${tip}` : undefined,
      vars: { '--c': categoryColor(s.category) },
    }, t);
  });

  const byCat = new Map();
  for (const s of spans) {
    const c = byCat.get(s.category) || { n: 0, types: new Map() };
    c.n++;
    c.types.set(s.type, (c.types.get(s.type) || 0) + 1);
    byCat.set(s.category, c);
  }
  const legend = h('ul', { class: 'legend-list', 'aria-label': 'Categories in this note' },
    [...byCat].sort((a, b) => b[1].n - a[1].n).map(([cat, c]) => h('li', { 'data-category': cat },
      h('span', { class: 'swatch', vars: { '--c': categoryColor(cat) }, 'aria-hidden': 'true' }),
      h('strong', {}, cat), ` ${c.n}`,
      h('span', { class: 'muted' }, ' · ', [...c.types].map(([t, k]) => `${t} ${k}`).join(', ')))));

  const side = [
    card(`${set}: ${spans.length} span${spans.length === 1 ? '' : 's'}`, spans.length ? legend : h('p', { class: 'empty' }, 'No spans in this set.')),
    spans.length ? card('Spans', table([
      { label: 'Text', value: (s) => h('button', { type: 'button', class: 'linkish', onclick: () => focusMark(`span-${s.i}`) }, s.text) },
      { label: 'Type', value: (s) => h('span', { class: 'swatch-label' }, h('span', { class: 'swatch', vars: { '--c': categoryColor(s.category) }, 'aria-hidden': 'true' }), s.type), rowHeader: false },
      { label: 'Offsets', num: true, value: (s) => `${s.start}–${s.end}` },
    ], spans, { cls: 'compact spans' })) : null,
  ];
  return { text, side };
}

const describe = (s) => `${s.category}/${s.type} “${s.text}” [${s.start}–${s.end}]`;

function overlayView(d, set, vs) {
  const { items, counts } = compare(d.ref, d.hyp);
  items.forEach((it, i) => {
    it.i = i;
    it.start = Math.min(it.ref?.start ?? Infinity, it.hyp?.start ?? Infinity);
    it.end = Math.max(it.ref?.end ?? -Infinity, it.hyp?.end ?? -Infinity);
  });
  const tipOf = (it) => {
    switch (it.kind) {
      case 'match': return `match: ${it.ref.category}/${it.ref.type}`;
      case 'missed': return `missed: ${set} ${describe(it.ref)}`;
      case 'spurious': return `spurious: ${vs} ${describe(it.hyp)}`;
      default: return `${it.kind}: ${set} ${describe(it.ref)} · ${vs} ${describe(it.hyp)}`;
    }
  };
  const n = [...d.text].length;
  const refs = items.filter((it) => it.ref).map((it) => it.ref);
  const hyps = items.filter((it) => it.hyp).map((it) => it.hyp);
  const seen = new Set();
  const pieces = segments(n, [items, refs, hyps]).filter((seg) => seg.cover[0].length).map((seg) => {
    const it = seg.cover[0][0];
    const first = !seen.has(it.i);
    seen.add(it.i);
    return { ...seg, item: it, first, inRef: seg.cover[1].length > 0, inHyp: seg.cover[2].length > 0 };
  });
  const text = markText(d.text, pieces, (p, t) => {
    const it = p.item;
    const tip = tipOf(it);
    return h('mark', {
      class: ['cmp', `k-${it.kind}`, p.inRef ? 'in-ref' : '', p.inHyp ? 'in-hyp' : ''].join(' ').trim(),
      id: p.first ? `item-${it.i}` : undefined, tabindex: p.first ? '0' : undefined,
      'data-kind': it.kind, 'data-tip': tip, 'aria-label': p.first ? tip : undefined,
    }, t);
  });

  const errors = items.filter((it) => it.kind !== 'match');
  const legend = h('ul', { class: 'legend-list kinds', 'aria-label': 'Differences by kind' },
    ERROR_KINDS.map((k) => h('li', { 'data-kind': k.kind, title: k.help },
      h('span', { class: `swatch k-${k.kind}`, 'aria-hidden': 'true' }),
      h('strong', {}, k.label), ' ', h('span', { class: 'count' }, String(counts[k.kind])),
      h('span', { class: 'muted' }, ` · ${k.help}`))));
  const side = [
    card(`${set} vs ${vs}`,
      h('p', { class: 'muted' }, `${d.ref.length} spans in ${set} (the reference), ${d.hyp.length} in ${vs}. `,
        'Underline: the reference’s extent; overline: the compared set’s.'),
      legend),
    card(`Differences (${errors.length})`, table([
      { label: 'Kind', value: (it) => h('button', { type: 'button', class: `linkish kind k-${it.kind}`, onclick: () => focusMark(`item-${it.i}`) }, it.kind) },
      { label: set, value: (it) => (it.ref ? `${it.ref.type} “${it.ref.text}”` : '—'), rowHeader: false },
      { label: vs, value: (it) => (it.hyp ? `${it.hyp.type} “${it.hyp.text}”` : '—') },
    ], errors, { cls: 'compact errors', empty: 'The two sets agree on every span.' })),
  ];
  return { text, side };
}
