// #/evaluations?corpus= — every evaluation with its headline P/R/F1, and a
// form to compare two of them with significance tests.

import { gql } from '../api.js';
import { h, date, href, card, table } from '../dom.js';

const EVALUATIONS = `query Evaluations($where: EvaluationWhereInput) {
  evaluations(first: 500, where: $where, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    edges { node { id goldSet systemSet metric precision recall f1 jobID createdAt corpus { name } } }
  }
}`;

export const f3 = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');

export async function render({ query, signal, title }) {
  title('Evaluations');
  const where = query.corpus ? { hasCorpusWith: { name: query.corpus } } : null;
  const { evaluations } = await gql(EVALUATIONS, { where }, { signal });
  const list = evaluations.edges.map((e) => e.node);
  const label = (e) => `#${e.id} ${e.corpus.name}: ${e.systemSet} vs ${e.goldSet} (${e.metric}, F1 ${f3(e.f1)})`;

  const a = h('select', { id: 'cmp-a', required: true }, list.map((e, i) => h('option', { value: e.id, selected: i === 1 }, label(e))));
  const b = h('select', { id: 'cmp-b', required: true }, list.map((e, i) => h('option', { value: e.id, selected: i === 0 }, label(e))));
  const msg = h('p', { class: 'form-status', role: 'status' });
  const compare = h('form', {
    class: 'stack compare-form',
    onsubmit: (ev) => {
      ev.preventDefault();
      if (a.value === b.value) {
        msg.className = 'form-status error-inline';
        msg.textContent = 'Choose two different evaluations.';
        return;
      }
      location.hash = href(['evaluations', a.value, 'vs', b.value]);
    },
  },
  h('label', { for: 'cmp-a' }, 'System A'), a,
  h('label', { for: 'cmp-b' }, 'System B'), b,
  h('p', { class: 'muted' }, 'Both must be scored against the same gold set of the same corpus: approximate randomization over documents (Bonferroni across categories) and bootstrap confidence intervals.'),
  h('div', {}, h('button', { type: 'submit' }, 'Compare')), msg);

  return h('div', { class: 'page' },
    h('h1', {}, 'Evaluations', query.corpus ? h('span', { class: 'tag' }, query.corpus) : null),
    card(null, table([
      { label: 'Evaluation', value: (e) => h('a', { href: href(['evaluations', e.id]), class: 'eval-link' }, `#${e.id}`) },
      { label: 'Corpus', value: (e) => h('a', { href: href(['corpus', e.corpus.name]) }, e.corpus.name), rowHeader: false },
      { label: 'Gold', value: (e) => e.goldSet },
      { label: 'System', value: (e) => e.systemSet },
      { label: 'Metric', value: (e) => e.metric },
      { label: 'Precision', num: true, value: (e) => f3(e.precision) },
      { label: 'Recall', num: true, value: (e) => f3(e.recall) },
      { label: 'F1', num: true, value: (e) => h('strong', {}, f3(e.f1)) },
      { label: 'Created', value: (e) => date(e.createdAt) },
    ], list, {
      cls: 'compact evaluations',
      caption: `${evaluations.totalCount} evaluation${evaluations.totalCount === 1 ? '' : 's'}; P/R/F1 are strict entity micro scores (i2b2) or the metric’s headline.`,
      empty: 'No evaluations yet: tag a corpus with a model, or score a system set, from Runs.',
    })),
    list.length > 1 ? card('Compare two systems', compare) : null);
}
