// #/evaluations/:a/vs/:b — two systems scored on the same gold set,
// compared: approximate randomization over documents for all tags and per
// category (p-values against the Bonferroni threshold), and each system's
// bootstrap confidence intervals.

import { gql, notFound } from '../api.js';
import { h, num, href, card, table, figures, breadcrumbs } from '../dom.js';
import { intervals } from '../charts.js';

const EVALS = `query Pair($ids: [ID!]) {
  evaluations(where: {idIn: $ids}) { edges { node { id goldSet systemSet metric precision recall f1 corpus { name } } } }
}`;
const COMPARE = `query Compare($a: ID!, $b: ID!) { compareEvaluations(a: $a, b: $b) }`;

const f4 = (x) => (typeof x === 'number' ? x.toFixed(4) : '—');
const p4 = (x) => (typeof x !== 'number' ? '—' : x < 0.0001 ? x.toExponential(1) : x.toFixed(4));
const thr = (x) => (typeof x === 'number' ? String(Number(x.toPrecision(3))) : '—');

export async function render({ params, signal, title }) {
  const { a, b } = params;
  title(`Compare ${a} and ${b}`);
  const [pair, cmp] = await Promise.all([
    gql(EVALS, { ids: [a, b] }, { signal }),
    gql(COMPARE, { a, b }, { signal }),
  ]);
  const byId = Object.fromEntries(pair.evaluations.edges.map((e) => [e.node.id, e.node]));
  const A = byId[a];
  const B = byId[b];
  if (!A || !B) throw notFound(`There is no evaluation ${!A ? a : b}.`);
  const c = cmp.compareEvaluations;
  const name = (e, k) => `${k}: ${e.systemSet} (#${e.id})`;
  const tests = c.tests || [];

  const testTable = table([
    { label: 'Scope', value: (t) => (t.scope === 'ALL' ? 'All tags' : t.scope) },
    { label: 'F1 A', num: true, value: (t) => f4(t.f1_a) },
    { label: 'F1 B', num: true, value: (t) => f4(t.f1_b) },
    { label: 'B − A', num: true, value: (t) => h('span', { class: t.diff > 0 ? 'up' : t.diff < 0 ? 'down' : '' }, `${t.diff > 0 ? '+' : ''}${f4(t.diff)}`) },
    { label: 'p', num: true, cls: 'p', value: (t) => p4(t.p) },
    { label: 'p × tests (Bonferroni)', num: true, value: (t) => p4(t.p_bonferroni) },
    { label: `Significant (p < ${thr(c.threshold)})`, value: (t) => (t.significant ? h('strong', { class: 'sig' }, 'yes') : h('span', { class: 'muted' }, 'no')) },
  ], tests, { cls: 'compact tests', caption: `${tests.length} tests at α = ${c.alpha}: the Bonferroni threshold is α / ${tests.length} = ${thr(c.threshold)}.` });
  testTable.querySelectorAll('tbody tr').forEach((tr, i) => { tr.dataset.scope = tests[i].scope; });

  const ci = (x) => (x ? `${f4(x.low)} – ${f4(x.high)}` : '—');
  const ciRows = [
    ['Precision', A.precision, c.a?.precision, B.precision, c.b?.precision],
    ['Recall', A.recall, c.a?.recall, B.recall, c.b?.recall],
    ['F1', A.f1, c.a?.f1, B.f1, c.b?.f1],
  ];
  const conf = `${Math.round(100 * (c.confidence || 0.95))}%`;
  const ciTable = table([
    { label: 'Measure', value: (r) => r[0] },
    { label: `A (#${A.id})`, num: true, value: (r) => f4(r[1]) },
    { label: `A ${conf} CI`, num: true, value: (r) => ci(r[2]) },
    { label: `B (#${B.id})`, num: true, value: (r) => f4(r[3]) },
    { label: `B ${conf} CI`, num: true, value: (r) => ci(r[4]) },
  ], ciRows, { cls: 'compact cis', caption: `Percentile bootstrap over documents, ${num(c.bootstrap)} resamples.` });
  const chart = intervals({
    id: 'ci', title: `${conf} bootstrap intervals (dot: the evaluation’s score)`,
    data: ciRows.flatMap((r) => [
      r[2] ? { label: `${r[0]} A`, low: r[2].low, high: r[2].high, point: r[1], color: '#5c80bc' } : null,
      r[4] ? { label: `${r[0]} B`, low: r[4].low, high: r[4].high, point: r[3], color: '#c1502e' } : null,
    ].filter(Boolean)),
  });

  return h('div', { class: 'page compare-page' },
    breadcrumbs([['Evaluations', '#/evaluations'], [`#${A.id} vs #${B.id}`]]),
    h('h1', {}, `${A.systemSet} vs ${B.systemSet}`, h('span', { class: 'tag' }, A.corpus.name), h('span', { class: 'tag' }, `gold: ${A.goldSet}`)),
    h('p', { class: 'meta' },
      h('a', { href: href(['evaluations', A.id]) }, name(A, 'A')), ' · ', h('a', { href: href(['evaluations', B.id]) }, name(B, 'B')),
      ` · ${num(c.documents)} documents · ${c.mode} matching · ${num(c.shuffles)} shuffles · seed ${c.seed}`),
    figures([
      ['F1 A', f4(A.f1)], ['F1 B', f4(B.f1)], ['Difference', `${B.f1 - A.f1 >= 0 ? '+' : ''}${f4(B.f1 - A.f1)}`],
      ['Significant (all tags)', tests.find((t) => t.scope === 'ALL')?.significant ? 'yes' : 'no'],
    ]),
    card('Approximate randomization', testTable),
    card('Confidence intervals', ciTable, chart));
}
