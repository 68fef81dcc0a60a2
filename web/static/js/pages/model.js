// #/models/:name — one tagger: what it was trained on, its training figures,
// its labels, and its provenance (the training job with its parameters).

import { gql, notFound } from '../api.js';
import { h, num, date, href, card, table, figures, breadcrumbs } from '../dom.js';
import { provenanceCard } from '../lineage.js';

const MODEL = `query Model($name: String!) {
  models(where: {name: $name}) { edges { node {
    id name kind labels trainingCorpus trainingSplit trainingSet metrics hash format endpoint jobID createdBy createdAt
  } } }
}`;

// The training figures' keys in words; a key not named shows as it is.
const FIGURES = {
  documents: 'notes trained on', tokens: 'tokens', spans: 'PHI spans', attributes: 'attributes (distinct feature values)',
  features: 'features (attribute and label pairs with a weight)', iterations: 'L-BFGS iterations', loss: 'final loss',
  seconds: 'training time, seconds', codeVersion: 'code version', pruned: 'attributes pruned', uncalibrated: 'no privacy point, because',
};

const metric = (m, k, d) => (typeof m?.[k] === 'number' ? (d === undefined ? num(m[k]) : m[k].toFixed(d)) : '—');

export async function render({ params, signal, title }) {
  title(params.name);
  const { models } = await gql(MODEL, { name: params.name }, { signal });
  const m = models.edges[0]?.node;
  if (!m) throw notFound(`There is no model named “${params.name}”.`);
  const lineage = provenanceCard(m.id, { signal });
  const external = m.kind === 'external';
  const other = Object.entries(m.metrics || {}).filter(([, v]) => v !== null && typeof v !== 'object');

  return h('div', { class: 'page model-page' },
    breadcrumbs([['Models', '#/models'], [m.name]]),
    h('div', { class: 'title-row' },
      h('h1', {}, m.name, h('span', { class: 'tag' }, m.kind)),
      h('div', { class: 'actions' },
        h('a', { class: 'button', href: href(['runs'], { start: 'tag', model: m.name }) }, 'Tag a corpus with it'))),
    h('p', { class: 'meta' }, `Created ${date(m.createdAt)}`, m.createdBy ? ` by ${m.createdBy}` : '',
      m.hash ? [' · hash ', h('code', { class: 'hash', title: m.hash }, m.hash.slice(0, 12))] : ''),
    external
      ? h('p', {}, 'An external tagger reached at ', h('code', {}, m.endpoint || '?'), '.')
      : h('p', {}, 'Trained on ', h('a', { href: href(['corpus', m.trainingCorpus], { set: m.trainingSet }) }, m.trainingCorpus),
        ` / split ${m.trainingSplit} / set ${m.trainingSet}.`),
    external ? null : figures([
      ['Documents', metric(m.metrics, 'documents')],
      ['Tokens', metric(m.metrics, 'tokens')],
      ['Features', metric(m.metrics, 'features')],
      ['Iterations', metric(m.metrics, 'iterations')],
      ['Loss', metric(m.metrics, 'loss', 1)],
      ['Seconds', metric(m.metrics, 'seconds', 1)],
    ]),
    h('div', { class: 'grid' },
      card('Labels', m.labels?.length ? h('p', { class: 'labels' }, m.labels.join(', ')) : h('p', { class: 'muted' }, 'Any label.')),
      other.length ? card('Training figures', table([
        { label: 'Figure', value: ([k]) => FIGURES[k] || k },
        { label: 'Value', num: true, value: ([, v]) => (typeof v === 'number' ? (Number.isInteger(v) ? num(v) : v.toFixed(4)) : String(v)) },
      ], other, { cls: 'compact' })) : null),
    await lineage);
}
