// #/risk/:id — a residual-risk experiment's figures (pipeline/experiment
// RiskResult): the PHI the tagger missed that stands in the released text,
// the simulated parrot attack of Carrell et al. 2019 and how well a
// classifier tells a leaked original from a surrogate, by type, beside the
// published figures they are read against. Types and counts only: no text.

import { gql, notFound } from '../api.js';
import { h, num, href, card, table, figures, breadcrumbs } from '../dom.js';
import { JOB_FIELDS, jobNumber } from '../jobs.js';

const JOB = `query RiskJob($id: ID!) { jobs(where: {id: $id}) { edges { node { ${JOB_FIELDS} } } } }`;

const f3 = (x) => (typeof x === 'number' ? x.toFixed(3) : '—');
const f4 = (x) => (typeof x === 'number' ? x.toFixed(4) : '—');
const ci = (x, c) => `${f4(x)} [${f4(c?.low)}, ${f4(c?.high)}]`;

export const ANCHORS = [
  ['Carrell et al. 2013 (human readers, pilot)', 'about 90% of residual identifiers concealed'],
  ['Carrell et al. 2019 (parrot attack)', 'recall 0.68, precision 0.52'],
  ['Carrell et al. 2020 (human readers)', 'recall 0.268, precision 0.372'],
  ['Aims of this project (default policy)', 'parrot precision ≤ 0.25, AUC ≤ 0.65'],
];

export async function render({ params, signal, title }) {
  title(`Residual risk ${params.id}`);
  const { jobs } = await gql(JOB, { id: params.id }, { signal }).catch((e) => {
    if (!/^\d+$/.test(params.id)) throw notFound(`There is no job “${params.id}”.`);
    throw e;
  });
  const job = jobs.edges[0]?.node;
  const r = job?.result;
  if (!job || job.kind !== 'experiment' || r?.kind !== 'residual-risk') {
    throw notFound(`Job “${params.id}” is no finished residual-risk experiment.`);
  }
  const res = r.residual || {};
  const parrot = r.parrot || {};
  const dist = r.distinguishability || {};
  const pt = Object.fromEntries((parrot.byType || []).map((t) => [t.type, t]));
  const at = Object.fromEntries((dist.byType || []).map((t) => [t.label, t]));
  return h('div', { class: 'page risk-page' },
    breadcrumbs([['Runs', '#/runs'], [`Residual risk #${jobNumber(job.id)}`]]),
    h('h1', {}, `Residual risk of ${r.corpus}`, h('span', { class: 'tag' }, r.system)),
    h('p', { class: 'meta' }, `${r.released} · seed ${r.seed} · intervals: ${num(r.bootstrap)} patient resamples`),
    figures([
      ['Leak rate', ci(res.leakRate, res.leakRateCI), 'gold spans of which a letter or digit stands in the release as it was'],
      ['Documents with a leak', `${num(res.documentsWithLeak)} of ${num(res.documents)}`],
      ['Expected leaks', `${num(Math.round(res.expected?.leaks || 0))} per ${num(res.expected?.documents || 0)} notes`],
      ['Parrot recall', f3(parrot.recall)],
      ['Parrot precision', f3(parrot.precision), 'of the strings the attacker flags, the share that are real'],
      ['AUC', f3(dist.auc), 'leaked originals against surrogates; 0.5: indistinguishable'],
    ]),
    card('By type', table([
      { label: 'Type', value: (t) => t.label },
      { label: 'Gold', num: true, value: (t) => num(t.gold) },
      { label: 'Leaked', num: true, value: (t) => num(t.leaked) },
      { label: 'Leak rate', num: true, value: (t) => f4(t.rate) },
      { label: 'Parrot flagged', num: true, value: (t) => num(pt[t.label]?.hypothesized ?? 0) },
      { label: 'Parrot precision', num: true, value: (t) => f3(pt[t.label]?.precision) },
      { label: 'AUC', num: true, value: (t) => (at[t.label] ? f3(at[t.label].auc) : '—') },
    ], res.byType || [])),
    card('What gives the strings away', table([
      { label: 'Classifier sees the type and', value: (f) => f.label },
      { label: 'AUC', num: true, value: (f) => f3(f.auc) },
    ], dist.features || [])),
    card('Beside the published figures', table([
      { label: 'Study', value: (a) => a[0] },
      { label: 'Figures', value: (a) => a[1] },
    ], ANCHORS)),
    h('p', {}, h('a', { href: href(['corpus', r.corpus], { set: r.system }) }, `The system set ${r.system}`)));
}
