// #/corpus/:name/doc/:doc/original?set= — for curators: a surrogate note
// (a corpus written by resynthesis) beside its original (the document of
// provenance.from whose id the surrogate's pseudonymizes: surrogateIDs),
// spans highlighted on both sides, and the
// replacements paired in text order. The original is PHI: a role that may
// not read the source corpus gets the API's refusal, shown as a message.

import { gql, notFound } from '../api.js';
import { h, href, card, breadcrumbs, table } from '../dom.js';
import { categoryColor } from '../colors.js';
import { segments } from '../overlay.js';
import { markText } from './document.js';
import { originalOf } from '../corpus-kind.js';

const SPAN = 'start end text category type';
const DOC = `query Doc($corpus: String!, $doc: String!, $set: String!) {
  corpusByName(name: $corpus) { name kind provenance }
  documents(first: 1, where: {externalID: $doc, hasCorpusWith: {name: $corpus}}) {
    edges { node { externalID text noteType split spans: annotations(set: $set) { ${SPAN} } } }
  }
}`;

const SOURCE_ID = `query Source($corpus: String!, $doc: String!) {
  surrogateIDs(corpus: $corpus, surrogate: [$doc]) { kind source }
}`;

export async function render({ params, query, signal, title }) {
  const { name, doc } = params;
  const set = query.set || 'gold';
  title(`${doc} · ${name} beside its original`);
  const sur = await gql(DOC, { corpus: name, doc, set }, { signal });
  if (!sur.corpusByName) throw notFound(`There is no corpus named “${name}”.`);
  const prov = sur.corpusByName.provenance || {};
  const from = originalOf(sur.corpusByName);
  const s = sur.documents.edges[0]?.node;
  if (!s) throw notFound(`Corpus “${name}” has no document “${doc}”.`);
  const crumbs = breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name])], [doc, href(['corpus', name, 'doc', doc], { set: query.set })], ['Original beside surrogate']]);
  if (!from) {
    return h('div', { class: 'page' }, crumbs, h('h1', {}, doc),
      h('p', { class: 'error', role: 'alert' }, `“${name}” is not a resynthesized surrogate corpus, so there is no original to show.`));
  }
  let o;
  let refused = null;
  try {
    const ids = await gql(SOURCE_ID, { corpus: name, doc }, { signal });
    const source = ids.surrogateIDs.find((p) => p.kind === 'document')?.source;
    const org = source === undefined ? { corpusByName: true, documents: { edges: [] } }
      : await gql(DOC, { corpus: from, doc: source, set: prov.set || 'gold' }, { signal });
    o = org.documents.edges[0]?.node;
    if (!org.corpusByName) refused = `The source corpus “${from}” no longer exists, or your role may not see it.`;
    else if (!o) refused = `The source corpus “${from}” has no document that “${doc}” was made from.`;
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    refused = `The original could not be loaded: ${e.message}`;
  }

  const pairs = o ? pairSpans(o.spans, s.spans) : [];
  const surView = side(s, `Surrogate · ${name}`, 'sur', pairs.length ? (i) => i : null);
  const view = h('div', { class: 'page side-page' }, crumbs,
    h('h1', {}, doc, h('span', { class: 'tag' }, 'surrogate'), s.noteType ? h('span', { class: 'tag' }, s.noteType) : null),
    h('p', { class: 'warn' }, 'The left column is the original note: it contains real PHI. Curators only.'),
    h('div', { class: 'side-by-side' },
      o ? side(o, `Original · ${from} · ${o.externalID}`, 'org', (i) => i) : card(`Original · ${from}`, h('p', { class: 'error', role: 'alert' }, refused)),
      surView),
    pairs.length ? card(`Replacements (${pairs.length})`, table([
      { label: '#', num: true, value: (p) => h('button', { type: 'button', class: 'linkish', onclick: () => focusPair(p.i) }, String(p.i + 1)) },
      { label: 'Type', value: (p) => h('span', { class: 'swatch-label' }, h('span', { class: 'swatch', vars: { '--c': categoryColor(p.o?.category || p.s?.category) }, 'aria-hidden': 'true' }), p.o?.type || p.s?.type), rowHeader: false },
      { label: 'Original', value: (p) => p.o?.text ?? '—' },
      { label: 'Surrogate', value: (p) => p.s?.text ?? '—' },
    ], pairs, { cls: 'compact replacements', caption: 'Spans paired in text order; focus a highlight to see its partner.' })) : null);
  view.addEventListener('focusin', (e) => {
    const k = e.target?.dataset?.pair;
    view.querySelectorAll('mark.paired').forEach((m) => m.classList.remove('paired'));
    if (k !== undefined) view.querySelectorAll(`mark[data-pair="${k}"]`).forEach((m) => m.classList.add('paired'));
  });
  return view;
}

// pairSpans pairs the original's and the surrogate's spans in text order:
// resynthesis keeps every span, in order, with its type.
function pairSpans(orig, sur) {
  const n = Math.max(orig.length, sur.length);
  return Array.from({ length: n }, (_, i) => ({ i, o: orig[i], s: sur[i] }));
}

function focusPair(i) {
  const el = document.querySelector(`#org-${i}`) || document.querySelector(`#sur-${i}`);
  el?.scrollIntoView({ block: 'center' });
  el?.focus({ preventScroll: true });
}

function side(d, heading, prefix) {
  const spans = d.spans.map((x, i) => ({ ...x, i }));
  const n = [...d.text].length;
  const seen = new Set();
  const pieces = segments(n, [spans]).filter((seg) => seg.cover[0].length).map((seg) => {
    const sp = seg.cover[0][0];
    const first = !seen.has(sp.i);
    seen.add(sp.i);
    return { ...seg, span: sp, first };
  });
  const text = markText(d.text, pieces, (p, t) => h('mark', {
    class: 'phi', id: p.first ? `${prefix}-${p.span.i}` : undefined, tabindex: p.first ? '0' : undefined,
    'data-pair': p.span.i, 'data-type': p.span.type, 'data-tip': `${p.span.category} / ${p.span.type}`,
    'aria-label': p.first ? `${p.span.text}: ${p.span.type}` : undefined,
    vars: { '--c': categoryColor(p.span.category) },
  }, t));
  text.removeAttribute('id');
  text.dataset.side = prefix;
  return h('section', { class: 'card side', 'aria-label': heading }, h('h2', {}, heading, ` (${spans.length} spans)`), text);
}
