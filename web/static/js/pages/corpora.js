// #/ — every corpus with its counts.

import { gql } from '../api.js';
import { h, num, date, href, table, card } from '../dom.js';
import { account } from '../session.js';
import { can } from '../roles.js';
import { isSurrogate } from '../corpus-kind.js';

const CORPORA = `query Corpora {
  corpora(first: 500, orderBy: {field: NAME}) {
    totalCount
    edges { node {
      id name kind checkStatus checkFindings tagset description createdAt provenance
      annotationSets { name kind }
      patients { totalCount }
      documents { totalCount }
    } }
  }
}`;

// One aliased statistics field per corpus: one more request, not one per corpus.
function statsQuery(corpora) {
  const fields = corpora.map((c, i) => `c${i}: corpusStatistics(corpus: "${c.id}", set: "gold", by: [CATEGORY]) { tokens spans uniqueSpans shareOfDocumentsWithPHI }`);
  return `query CorporaStats { ${fields.join('\n')} }`;
}

export async function render({ signal, title }) {
  title('Corpora');
  const data = await gql(CORPORA, {}, { signal });
  const corpora = data.corpora.edges.map((e) => e.node);
  const withGold = corpora.filter((c) => (c.annotationSets || []).some((s) => s.name === 'gold'));
  const stats = {};
  if (withGold.length) {
    // A corpus the statistics fail for still gets its row, with dashes.
    const { data: sd } = await gql(statsQuery(withGold), {}, { signal, partial: true });
    withGold.forEach((c, i) => { stats[c.id] = sd?.[`c${i}`]; });
  }
  const source = (c) => c.provenance?.source || '';
  return h('div', { class: 'page' },
    h('h1', {}, 'Corpora'),
    corpora.length
      ? card(null, table([
        { label: 'Corpus', value: (c) => h('a', { href: href(['corpus', c.name]), class: 'corpus-link' }, c.name) },
        { label: 'Kind', value: (c) => [h('span', { class: `corpus-kind k-${c.kind}`, title: isSurrogate(c) ? 'PHI replaced by resynthesis' : 'original text: real PHI' }, c.kind), quarantineBadge(c)] },
        { label: 'Tag set', value: (c) => c.tagset },
        { label: 'Patients', num: true, value: (c) => num(c.patients.totalCount) },
        { label: 'Documents', num: true, value: (c) => num(c.documents.totalCount) },
        { label: 'Tokens', num: true, value: (c) => num(stats[c.id]?.tokens) },
        { label: 'PHI spans (gold)', num: true, value: (c) => num(stats[c.id]?.spans) },
        { label: 'Unique PHI', num: true, value: (c) => num(stats[c.id]?.uniqueSpans) },
        { label: 'Annotation sets', value: (c) => (c.annotationSets || []).map((s) => s.name).join(', ') || '—' },
        { label: 'Source', value: source },
        { label: 'Created', value: (c) => date(c.createdAt) },
      ], corpora, { cls: 'corpora', caption: `${num(data.corpora.totalCount)} corpora` }))
      : card(null, emptyState()));
}

/** The badge of a corpus whose resynthesis check failed, or null. */
export function quarantineBadge(c) {
  if (c.checkStatus !== 'failed') return null;
  return h('span', {
    class: 'corpus-kind k-quarantined',
    title: `Its resynthesis check found ${num(c.checkFindings)} unresolved problems: hidden from annotators and researchers and not releasable until a rerun passes or a curator resolves them.`,
  }, 'quarantined');
}

// What an empty list means depends on the role: nothing exists yet, or
// nothing this account may see.
function emptyState() {
  const me = account();
  if (me?.role === 'researcher') {
    return h('div', { class: 'empty-state', 'data-role': 'researcher' },
      h('p', {}, 'No corpus for you yet.'),
      h('p', {}, 'As a researcher you see surrogate corpora only: corpora whose PHI was replaced by resynthesis, never original notes. ',
        'None exists yet; a curator makes one from an original corpus (Runs → Resynthesis, or ', h('code', {}, 'deidcorpus resynth'), '). ',
        'Releases of surrogate corpora are under ', h('a', { href: '#/releases' }, 'Releases'), '.'));
  }
  if (me?.role === 'annotator') {
    return h('div', { class: 'empty-state', 'data-role': 'annotator' },
      h('p', {}, 'No corpus is assigned to you yet.'),
      h('p', {}, 'As an annotator you see the corpora an admin assigns to you (', h('code', {}, `deidcorpus users assign ${me.name} CORPUS`), ').'));
  }
  return h('div', { class: 'empty-state' },
    h('p', {}, 'No corpora yet.'),
    can('import')
      ? h('p', {}, 'Import one with ', h('code', {}, 'deidcorpus import --corpus NAME --tagset i2b2-2014 DIR'),
        ', or start the server with ', h('code', {}, 'deidcorpus serve --demo'), ' for a synthetic demo corpus.')
      : null);
}
