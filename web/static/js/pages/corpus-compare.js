// #/compare?a=&b=&setA=&setB=&by= — two corpora side by side (B compared
// with A, the reference): their PHI per type or category as grouped bars,
// Pearson's chi-square and its p, the groups with the largest standardized
// residuals highlighted, B's token and PHI out-of-vocabulary rates against
// A, and both name-pattern tables (Yeniterzi et al. Table 7).

import { gql } from '../api.js';
import { h, num, pct, href, card, table, figures, breadcrumbs } from '../dom.js';
import { groupedBars } from '../charts.js';

const CORPORA = `query CompareCorpora { corpora(first: 500, orderBy: {field: NAME}) { edges { node { name annotationSets { name } } } } }`;

const COMPARE = `query Compare($a: String!, $b: String!, $setA: String!, $setB: String!, $by: StatDimension!) {
  compareCorpora(a: $a, b: $b, setA: $setA, setB: $setB, by: $by) {
    by
    a { corpus annotationSet documents tokens vocabulary spans phiTexts nameSpans namePatterns { pattern tokens count } }
    b { corpus annotationSet documents tokens vocabulary spans phiTexts nameSpans namePatterns { pattern tokens count } }
    chiSquare { statistic dof p n groups dropped minExpected smallExpected }
    chiSquareUnique { statistic dof p }
    oov { tokenRate tokenTypeRate phiRate phiTypeRate tokens oovTokens tokenTypes oovTokenTypes spans oovSpans phiTexts oovPHITexts }
    groups { group category a { total unique share } b { total unique share } expectedA expectedB residual p uniqueP phiOOVRate oovSpans }
  }
}`;

/** HIGHLIGHTED is how many groups, largest |residual| first, are highlighted. */
export const HIGHLIGHTED = 3;

const p4 = (x) => (typeof x !== 'number' ? '—' : x < 0.0001 ? x.toExponential(1) : x.toFixed(4));
const r2 = (x) => `${x > 0 ? '+' : ''}${x.toFixed(2)}`;

/** largest returns the labels of the groups with the largest |residual| (ties at the cut included). */
export function largest(groups, n = HIGHLIGHTED) {
  const nonzero = groups.filter((g) => Math.abs(g.residual) > 0);
  const sorted = [...nonzero].sort((x, y) => Math.abs(y.residual) - Math.abs(x.residual));
  if (sorted.length <= n) return new Set(sorted.map((g) => g.group));
  const cut = Math.abs(sorted[n - 1].residual);
  return new Set(sorted.filter((g) => Math.abs(g.residual) >= cut).map((g) => g.group));
}

export async function render({ query, signal, title }) {
  title('Compare corpora');
  const { corpora } = await gql(CORPORA, {}, { signal });
  const list = corpora.edges.map((e) => e.node);
  const a = query.a || list[0]?.name || '';
  const b = query.b || list[1]?.name || a;
  const setA = query.setA || 'gold';
  const setB = query.setB || 'gold';
  const by = (query.by || 'TYPE').toUpperCase();

  const form = compareForm(list, { a, b, setA, setB, by });
  const page = h('div', { class: 'page corpus-compare' },
    breadcrumbs([['Corpora', '#/'], ['Compare']]),
    h('h1', {}, 'Compare two corpora'),
    card(null, form));
  if (!query.a || !query.b) {
    page.append(h('p', { class: 'muted' }, 'Choose a reference corpus A and a corpus B to compare with it (train and test, a corpus and its surrogate, two sites).'));
    return page;
  }
  const { compareCorpora: c } = await gql(COMPARE, { a, b, setA, setB, by }, { signal });
  page.append(...results(c));
  return page;
}

function compareForm(list, v) {
  const names = list.map((c) => c.name);
  const sel = (id, value) => h('select', { id, name: id, required: true }, names.map((n) => h('option', { value: n, selected: n === value }, n)));
  const selA = sel('cmp-corpus-a', v.a);
  const selB = sel('cmp-corpus-b', v.b);
  const setA = h('input', { id: 'cmp-set-a', value: v.setA, size: 10, required: true });
  const setB = h('input', { id: 'cmp-set-b', value: v.setB, size: 10, required: true });
  const by = h('select', { id: 'cmp-by' }, [['TYPE', 'type'], ['CATEGORY', 'category']].map(([k, l]) => h('option', { value: k, selected: k === v.by }, l)));
  return h('form', {
    class: 'inline-form compare-corpora-form',
    onsubmit: (e) => {
      e.preventDefault();
      location.hash = href(['compare'], { a: selA.value, setA: setA.value.trim(), b: selB.value, setB: setB.value.trim(), by: by.value });
    },
  },
  h('label', { for: 'cmp-corpus-a' }, 'A (reference) '), selA, h('label', { for: 'cmp-set-a' }, ' set '), setA,
  h('label', { for: 'cmp-corpus-b' }, ' B '), selB, h('label', { for: 'cmp-set-b' }, ' set '), setB,
  h('label', { for: 'cmp-by' }, ' by '), by,
  ' ', h('button', { type: 'submit' }, 'Compare'));
}

function results(c) {
  const top = largest(c.groups);
  const cs = c.chiSquare;
  const o = c.oov;
  const sig = cs.p < 0.05;

  const chart = groupedBars({
    id: 'compare-groups',
    title: `Share of each corpus’s PHI by ${c.by}`,
    names: [`A: ${c.a.corpus}`, `B: ${c.b.corpus}`],
    data: c.groups.map((g) => ({
      label: g.group, a: g.a.share, b: g.b.share, aCount: g.a.total, bCount: g.b.total, highlight: top.has(g.group),
      title: `${g.group}: A ${g.a.total} (${pct(g.a.share)}), B ${g.b.total} (${pct(g.b.share)}); residual ${r2(g.residual)}, p ${p4(g.p)}`,
    })),
  });

  const groupTable = table([
    { label: c.by === 'type' ? 'Type' : 'Category', value: (g) => (top.has(g.group) ? h('strong', {}, `▲ ${g.group}`) : g.group) },
    ...(c.by === 'type' ? [{ label: 'Category', value: (g) => g.category, rowHeader: false }] : []),
    { label: 'A total', num: true, value: (g) => num(g.a.total) },
    { label: 'A unique', num: true, value: (g) => num(g.a.unique) },
    { label: 'B total', num: true, value: (g) => num(g.b.total) },
    { label: 'B unique', num: true, value: (g) => num(g.b.unique) },
    { label: 'Residual', num: true, cls: 'residual', value: (g) => h('span', { class: Math.abs(g.residual) >= 1.96 ? 'bad' : '' }, r2(g.residual)) },
    { label: 'p', num: true, value: (g) => p4(g.p) },
    { label: 'p (unique)', num: true, value: (g) => p4(g.uniqueP) },
    { label: 'B PHI OOV', num: true, value: (g) => (g.b.total ? pct(g.phiOOVRate) : '—') },
  ], c.groups, {
    cls: 'compact compare-groups',
    caption: 'Laid out like Deleger et al. 2014, Table 3. Residual: B’s adjusted standardized residual (about N(0, 1) when the corpora are alike; red beyond ±1.96); p: that group against all others (2 × 2), uncorrected for the number of groups; ▲ the largest residuals.',
  });
  groupTable.querySelectorAll('tbody tr').forEach((tr, i) => {
    tr.dataset.group = c.groups[i].group;
    if (top.has(c.groups[i].group)) tr.classList.add('highlight');
  });

  const patternTable = (side, cls) => table([
    { label: 'Name pattern', value: (r) => h('code', {}, r.pattern) },
    { label: 'Tokens', num: true, value: (r) => num(r.tokens) },
    { label: 'Count', num: true, value: (r) => num(r.count) },
    { label: 'Share', num: true, value: (r) => pct(side.nameSpans ? r.count / side.nameSpans : 0) },
  ], side.namePatterns, { cls: `compact name-patterns ${cls}`, caption: `${side.corpus} (${side.annotationSet}): ${num(side.nameSpans)} name spans`, empty: 'No name spans.' });

  return [
    figures([
      ['Chi-square', cs.statistic.toFixed(2), `Pearson, over the spans per ${c.by}`],
      ['Degrees of freedom', String(cs.dof), `${cs.groups} groups − 1`],
      ['p', h('span', { id: 'chi-p', class: sig ? 'bad' : '' }, p4(cs.p))],
      ['Token OOV', h('span', { id: 'token-oov' }, pct(o.tokenRate)), 'share of B’s whitespace tokens never seen in A (case-folded)'],
      ['PHI OOV', h('span', { id: 'phi-oov' }, pct(o.phiRate)), 'share of B’s spans whose text is no span text of A (case-folded)'],
    ]),
    h('p', { class: 'meta chi-summary' },
      `A: ${c.a.corpus} (${c.a.annotationSet}), ${num(c.a.documents)} documents, ${num(c.a.tokens)} tokens, ${num(c.a.spans)} PHI · `,
      `B: ${c.b.corpus} (${c.b.annotationSet}), ${num(c.b.documents)} documents, ${num(c.b.tokens)} tokens, ${num(c.b.spans)} PHI. `,
      `χ² = ${cs.statistic.toFixed(4)}, dof ${cs.dof}, p = ${p4(cs.p)}: `,
      sig ? 'the two corpora distribute their PHI differently (p < 0.05).' : 'no evidence that the two corpora distribute their PHI differently (p ≥ 0.05).',
      cs.smallExpected ? ` ${cs.smallExpected} cells are expected below 5 (smallest ${cs.minExpected.toFixed(2)}): read the p-value with care.` : '',
      cs.dropped.length ? ` Absent from both, left out: ${cs.dropped.join(', ')}.` : '',
      ` Over distinct texts per ${c.by}: χ² = ${c.chiSquareUnique.statistic.toFixed(2)}, dof ${c.chiSquareUnique.dof}, p = ${p4(c.chiSquareUnique.p)}.`),
    card(`PHI by ${c.by}`, chart, groupTable),
    card('Out of vocabulary (B against A)', table([
      { label: 'Measure', value: (r) => r[0] },
      { label: 'Rate', num: true, value: (r) => pct(r[1]) },
      { label: 'Out of vocabulary', num: true, value: (r) => num(r[2]) },
      { label: 'Of', num: true, value: (r) => num(r[3]) },
    ], [
      ['Tokens (occurrences)', o.tokenRate, o.oovTokens, o.tokens],
      ['Distinct tokens', o.tokenTypeRate, o.oovTokenTypes, o.tokenTypes],
      ['PHI spans', o.phiRate, o.oovSpans, o.spans],
      ['Distinct PHI texts', o.phiTypeRate, o.oovPHITexts, o.phiTexts],
    ], { cls: 'compact oov', caption: 'Tokens: whitespace-separated, case-folded. PHI: a span’s whole text, case-folded, looked up among all of A’s span texts.' })),
    h('div', { class: 'grid' },
      card(`Name patterns of A: ${c.a.corpus}`, patternTable(c.a, 'patterns-a')),
      card(`Name patterns of B: ${c.b.corpus}`, patternTable(c.b, 'patterns-b'))),
  ];
}
