// #/ — every corpus with its counts.

import { gql } from '../api.js';
import { h, num, date, href, table, card } from '../dom.js';

const CORPORA = `query Corpora {
  corpora(first: 500, orderBy: {field: NAME}) {
    totalCount
    edges { node {
      id name tagset description createdAt provenance
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
      : card(null,
        h('p', {}, 'No corpora yet.'),
        h('p', {}, 'Import one with ', h('code', {}, 'deidcorpus import --corpus NAME --tagset i2b2-2014 DIR'),
          ', or start the server with ', h('code', {}, 'deidcorpus serve --demo'), ' for a synthetic demo corpus.')));
}
