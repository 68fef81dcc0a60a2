// #/models?model= — the taggers: built-in CRF models with what they were
// trained on and their training figures, and registered external taggers.

import { gql } from '../api.js';
import { h, num, date, href, card, table } from '../dom.js';
import { can } from '../roles.js';

const MODELS = `query Models {
  models(first: 500, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    edges { node {
      id name kind labels trainingCorpus trainingSplit trainingSet metrics hash format endpoint jobID createdBy createdAt
    } }
  }
}`;

const metric = (m, k, d) => (typeof m?.[k] === 'number' ? (d === undefined ? num(m[k]) : m[k].toFixed(d)) : '—');

export async function render({ query, signal, title }) {
  title('Models');
  const { models } = await gql(MODELS, {}, { signal });
  const list = models.edges.map((e) => e.node);
  const t = table([
    { label: 'Model', value: (m) => h('a', { class: 'model-name', id: `model-${m.name}`, href: href(['models', m.name]) }, m.name) },
    { label: 'Kind', value: (m) => m.kind, rowHeader: false },
    { label: 'Trained on', value: (m) => (m.kind === 'external'
      ? h('span', { class: 'muted', title: m.endpoint }, m.endpoint || 'external')
      : [h('a', { href: href(['corpus', m.trainingCorpus], { set: m.trainingSet }) }, m.trainingCorpus), ` / ${m.trainingSplit} / ${m.trainingSet}`]) },
    { label: 'Labels', value: (m) => (m.labels?.length ? h('span', { class: 'labels' }, m.labels.join(', ')) : h('span', { class: 'muted' }, 'any')) },
    { label: 'Docs', num: true, value: (m) => metric(m.metrics, 'documents') },
    { label: 'Tokens', num: true, value: (m) => metric(m.metrics, 'tokens') },
    { label: 'Features', num: true, value: (m) => metric(m.metrics, 'features') },
    { label: 'Iterations', num: true, value: (m) => metric(m.metrics, 'iterations') },
    { label: 'Loss', num: true, value: (m) => metric(m.metrics, 'loss', 1) },
    { label: 'Seconds', num: true, value: (m) => metric(m.metrics, 'seconds', 1) },
    { label: 'Hash', value: (m) => (m.hash ? h('code', { title: m.hash, class: 'hash' }, m.hash.slice(0, 12)) : '—') },
    { label: 'Created', value: (m) => date(m.createdAt) },
    { label: '', value: (m) => h('a', { href: href(['runs'], { start: 'tag', model: m.name }), 'aria-label': `Tag a corpus with ${m.name}` }, 'Tag with it') },
  ], list, {
    cls: 'compact models',
    caption: 'The hash is of the model’s content: the same data and options give the same hash.',
    empty: can('registerModel')
      ? 'No models yet: train one from Runs, or register an external tagger (registerExternalModel).'
      : 'No models you may use yet: train one from Runs (a model trained on a corpus is seen only by those who see that corpus).',
  });
  t.querySelectorAll?.('tbody tr').forEach((tr, i) => {
    tr.dataset.model = list[i].name;
    if (list[i].name === query.model) tr.classList.add('highlight');
  });
  const view = h('div', { class: 'page' }, h('h1', {}, 'Models'), card(`${num(models.totalCount)} model${models.totalCount === 1 ? '' : 's'}`, t));
  if (query.model) queueMicrotask(() => document.getElementById(`model-${query.model}`)?.scrollIntoView({ block: 'center' }));
  return view;
}
