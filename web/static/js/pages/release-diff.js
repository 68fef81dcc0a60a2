// #/releases/:a/diff/:b — what changed from release a to release b
// (releaseDiff): counts, then the documents added, removed and changed and
// the spans added, removed and relabelled.

import { gql, notFound } from '../api.js';
import { h, num, href, card, table, figures, breadcrumbs } from '../dom.js';
import { shortHash } from './releases.js';

const DIFF = `query ReleaseDiff($a: String!, $b: String!) {
  a: release(ref: $a) { ref corpus documents spans rootHash createdAt }
  b: release(ref: $b) { ref corpus documents spans rootHash createdAt }
  diff: releaseDiff(a: $a, b: $b)
}`;

const LIMIT = 500; // rows listed per kind of change; the counts are complete

export async function render({ params, signal, title }) {
  title(`${params.a} → ${params.b}`);
  const { a: ra, b: rb } = params;
  for (const ref of [ra, rb]) {
    if (!ref.includes('@')) throw notFound(`“${ref}” is not a release: a release is named name@version, e.g. demo@1.0.0.`);
  }
  const data = await gql(DIFF, { a: ra, b: rb }, { signal, partial: true });
  const { a, b, diff } = data.data || {};
  if (!a) throw notFound(`There is no release ${ra}.`);
  if (!b) throw notFound(`There is no release ${rb}.`);
  if (!diff) throw new Error(`The server could not compare ${ra} and ${rb}: ${(data.errors || []).map((e) => e.message).join('; ') || 'no answer'}`);

  const list = (k) => diff[k] || [];
  const counts = {
    documentsAdded: list('documentsAdded').length, documentsRemoved: list('documentsRemoved').length, documentsChanged: list('documentsChanged').length,
    spansAdded: list('spansAdded').length, spansRemoved: list('spansRemoved').length, spansRelabelled: list('spansRelabelled').length,
  };
  const total = Object.values(counts).reduce((x, y) => x + y, 0);
  const same = a.rootHash === b.rootHash;

  const fig = (label, key, hint) => [label, h('span', { class: `count ${key}`, 'data-count': counts[key] }, num(counts[key])), hint];
  return h('div', { class: 'page diff-page', 'data-changes': String(total) },
    breadcrumbs([['Releases', '#/releases'], [a.ref, href(['releases', a.ref])], [`→ ${b.ref}`]]),
    h('h1', {}, 'Changes from ', h('a', { href: href(['releases', a.ref]) }, a.ref), ' to ', h('a', { href: href(['releases', b.ref]) }, b.ref)),
    h('p', { class: 'meta' },
      `${a.ref}: ${num(a.documents)} documents, ${num(a.spans)} spans, root `, h('code', { class: 'hash', title: a.rootHash }, shortHash(a.rootHash)),
      ` · ${b.ref}: ${num(b.documents)} documents, ${num(b.spans)} spans, root `, h('code', { class: 'hash', title: b.rootHash }, shortHash(b.rootHash)),
      ' · ', h('a', { href: href(['releases', b.ref, 'diff', a.ref]) }, 'the other way round')),
    total === 0
      ? h('p', { class: 'no-changes note-ok', role: 'status' },
        `No changes: ${b.ref} holds the same documents and spans as ${a.ref}`,
        same ? ' (the same root hash).' : '.')
      : null,
    figures([
      fig('Documents added', 'documentsAdded'),
      fig('Documents removed', 'documentsRemoved'),
      fig('Documents changed', 'documentsChanged', 'the text differs'),
      fig('Spans added', 'spansAdded'),
      fig('Spans removed', 'spansRemoved'),
      fig('Spans relabelled', 'spansRelabelled', 'same offsets, another type'),
    ]),
    total ? [
      docsCard('Documents added', list('documentsAdded'), b.corpus, 'documents-added'),
      docsCard('Documents removed', list('documentsRemoved'), a.corpus, 'documents-removed'),
      docsCard('Documents changed', list('documentsChanged'), b.corpus, 'documents-changed'),
      spansCard('Spans added', list('spansAdded'), b.corpus, 'spans-added'),
      spansCard('Spans removed', list('spansRemoved'), a.corpus, 'spans-removed'),
      spansCard('Spans relabelled', list('spansRelabelled'), b.corpus, 'spans-relabelled', true),
    ] : null);
}

const more = (n) => (n > LIMIT ? h('p', { class: 'muted' }, `The first ${num(LIMIT)} of ${num(n)} are listed.`) : null);

function docsCard(title, ids, corpus, cls) {
  if (!ids.length) return null;
  const sorted = [...ids].sort();
  return card(`${title} (${num(ids.length)})`,
    h('ul', { class: `doc-list ${cls}` }, sorted.slice(0, LIMIT).map((d) => h('li', {}, h('a', { href: href(['corpus', corpus, 'doc', d]) }, d)))),
    more(ids.length));
}

function spansCard(title, spans, corpus, cls, relabelled = false) {
  if (!spans.length) return null;
  const sorted = [...spans].sort((x, y) => x.document.localeCompare(y.document) || x.start - y.start);
  return card(`${title} (${num(spans.length)})`, table([
    { label: 'Document', value: (s) => h('a', { href: href(['corpus', corpus, 'doc', s.document], { set: s.set }) }, s.document) },
    { label: 'Set', value: (s) => s.set },
    { label: 'Offsets', num: true, value: (s) => `${s.start}–${s.end}` },
    { label: 'Text', value: (s) => h('span', { class: 'span-text' }, s.text) },
    relabelled ? { label: 'Was', value: (s) => h('del', {}, s.wasType) } : null,
    { label: relabelled ? 'Now' : 'Type', value: (s) => (relabelled ? h('ins', {}, s.type) : s.type) },
  ].filter(Boolean), sorted.slice(0, LIMIT), { cls: `compact spans-diff ${cls}` }), more(spans.length));
}
