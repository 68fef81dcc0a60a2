// #/evaluations/:id — one evaluation's report (pipeline/evaluate.Report):
// the i2b2 script's tables (micro and macro with SD, per category), F1 per
// type as bars, the confusion matrix as a heat map, the error taxonomy with
// exposure, and token accuracy.

import { gql, notFound } from '../api.js';
import { h, num, pct, date, href, card, table, figures, breadcrumbs } from '../dom.js';
import { barChart, heatmap, prCurve } from '../charts.js';
import { categoryColor, ERROR_KINDS } from '../colors.js';
import { provenanceCard } from '../lineage.js';
import { jobNumber } from '../jobs.js';

const EVALUATION = `query Evaluation($id: ID!) {
  evaluations(where: {id: $id}) { edges { node {
    id goldSet systemSet metric options precision recall f1 jobID createdBy createdAt corpus { name } report
  } } }
}`;

const f4 = (x) => (typeof x === 'number' ? x.toFixed(4) : '—');
const sd = (m, s) => h('span', {}, f4(m), h('span', { class: 'sd' }, ` ±${(s ?? 0).toFixed(3)}`));

export async function render({ params, signal, title }) {
  title(`Evaluation ${params.id}`);
  const { evaluations } = await gql(EVALUATION, { id: params.id }, { signal }).catch((e) => {
    if (/invalid|parse|ID/i.test(e.message) && !/^\d+$/.test(params.id)) throw notFound(`There is no evaluation “${params.id}”.`);
    throw e;
  });
  const ev = evaluations.edges[0]?.node;
  if (!ev) throw notFound(`There is no evaluation “${params.id}”.`);
  const r = ev.report || {};
  const lineage = provenanceCard(ev.id, { signal });

  return h('div', { class: 'page evaluation-page' },
    breadcrumbs([['Evaluations', '#/evaluations'], [`#${ev.id}`]]),
    h('div', { class: 'title-row' },
      h('h1', {}, `${ev.systemSet} vs ${ev.goldSet}`, h('span', { class: 'tag' }, ev.metric), h('span', { class: 'tag' }, ev.corpus.name)),
      h('div', { class: 'actions' },
        h('a', { class: 'button', href: href(['corpus', ev.corpus.name], { set: ev.systemSet }) }, 'System set’s statistics'),
        h('a', { class: 'button', href: href(['evaluations'], { corpus: ev.corpus.name }) }, 'Compare with another…'))),
    h('p', { class: 'meta' }, `Evaluation #${ev.id} · ${num(r.documents)} documents scored · created ${date(ev.createdAt)}`,
      ev.jobID ? [' by job ', h('a', { href: href(['runs']) }, jobNumber(ev.jobID))] : '',
      r.hipaa_list ? ` · HIPAA list: ${r.hipaa_list}` : '', r.hipaa_only_analyses ? ' · analyses cover HIPAA tags only' : ''),
    notScored(r),
    figures([
      ['Precision', f4(ev.precision), 'strict entity micro (i2b2) or the metric’s headline'],
      ['Recall', f4(ev.recall)],
      ['F1', f4(ev.f1)],
      r.token_accuracy ? ['Token accuracy', pct(r.token_accuracy.accuracy), `${num(r.token_accuracy.correct)} of ${num(r.token_accuracy.words)} words`] : null,
      r.token_accuracy ? ['PHI words exposed', pct(r.token_accuracy.exposure), 'label-blind: PHI words no system tag covers'] : null,
    ].filter(Boolean)),
    headline(r),
    perTypeCard(r),
    curveCard(r),
    h('div', { class: 'grid' }, errorsCard(r), accuracyCard(r)),
    confusionCard(r),
    await lineage);
}

// The model's precision and recall at each recall bias the tagging run was
// asked for (MIST's knob), best F1 marked.
function curveCard(r) {
  const pts = r.recall_bias_curve || [];
  if (!pts.length) return null;
  const best = pts.reduce((a, b) => (b.f1 > a.f1 ? b : a));
  return card('Recall bias: precision against recall', prCurve({
    id: 'recall-bias-curve', title: 'Strict micro precision and recall by recall bias', key: 'labels: the bias added to every type; filled: best F1',
    data: pts.map((p) => ({ label: String(p.bias), precision: p.precision, recall: p.recall, f1: p.f1, highlight: p === best })),
  }), table([
    { label: 'Bias', num: true, value: (p) => String(p.bias) },
    { label: 'TP', num: true, value: (p) => num(p.tp) },
    { label: 'FP', num: true, value: (p) => num(p.fp) },
    { label: 'FN', num: true, value: (p) => num(p.fn) },
    { label: 'P', num: true, value: (p) => f4(p.precision) },
    { label: 'R', num: true, value: (p) => f4(p.recall) },
    { label: 'F1', num: true, value: (p) => (p === best ? h('strong', {}, f4(p.f1)) : f4(p.f1)) },
  ], pts, { cls: 'compact curve' }));
}

function notScored(r) {
  const g = r.gold_only?.length || 0;
  const s = r.system_only?.length || 0;
  if (!g && !s) return null;
  return h('p', { class: 'warn' }, `Not scored: ${g} document${g === 1 ? '' : 's'} only in gold, ${s} only in the system set.`);
}

// The i2b2 2014 script's tables: overall measures, then per category.
function headline(r) {
  if (r.metric === 'meddocan' && r.meddocan) return meddocan(r.meddocan);
  if (r.metric === 'physionet' && r.overlap) return overlap(r.overlap);
  const ms = r.measures || [];
  if (!ms.length) return card('Measures', h('p', { class: 'empty' }, 'This report has no measures.'));
  const cols = [
    { label: 'Measure', value: (m) => m.label },
    { label: 'TP', num: true, value: (m) => num(m.counts?.tp) },
    { label: 'FP', num: true, value: (m) => num(m.counts?.fp) },
    { label: 'FN', num: true, value: (m) => num(m.counts?.fn) },
    { label: 'Micro P', num: true, cls: 'micro-p', value: (m) => f4(m.micro_precision) },
    { label: 'Micro R', num: true, cls: 'micro-r', value: (m) => f4(m.micro_recall) },
    { label: 'Micro F1', num: true, cls: 'micro-f1', value: (m) => h('strong', {}, f4(m.micro_f1)) },
    { label: 'Macro P (SD)', num: true, value: (m) => sd(m.macro_precision, m.macro_precision_sd) },
    { label: 'Macro R (SD)', num: true, value: (m) => sd(m.macro_recall, m.macro_recall_sd) },
    { label: 'Macro F1', num: true, value: (m) => f4(m.macro_f1) },
  ];
  const overall = ms.filter((m) => !m.category);
  const cats = ms.filter((m) => m.category);
  const withRowAttr = (t, list) => {
    t.querySelectorAll('tbody tr').forEach((tr, i) => { tr.dataset.measure = list[i].label; });
    return t;
  };
  return h('div', { class: 'grid one' },
    card('Overall (i2b2 2014 script)', withRowAttr(table(cols, overall, { cls: 'compact measures', caption: 'Micro: pooled over documents; macro: mean over documents, ± standard deviation. (“HIPPA” is the official script’s spelling.)' }), overall)),
    cats.length ? card('Per category', withRowAttr(table(cols.map((c, i) => (i === 0 ? { ...c, value: (m) => h('span', { class: 'swatch-label' }, h('span', { class: 'swatch', vars: { '--c': categoryColor(m.category) }, 'aria-hidden': 'true' }), m.label) } : c)),
      cats, { cls: 'compact measures per-category' }), cats)) : null);
}

function meddocan(m) {
  const rows = [['Subtask 1 (span and label)', m.subtask1], ['Subtask 2, strict (span)', m.subtask2_strict], ['Subtask 2, merged', m.subtask2_merged]];
  return card('MEDDOCAN measures', table([
    { label: 'Measure', value: (x) => x[0] },
    { label: 'TP', num: true, value: (x) => num(x[1]?.tp) },
    { label: 'FP', num: true, value: (x) => num(x[1]?.fp) },
    { label: 'FN', num: true, value: (x) => num(x[1]?.fn) },
    { label: 'Precision', num: true, value: (x) => f4(x[1]?.precision) },
    { label: 'Recall', num: true, value: (x) => f4(x[1]?.recall) },
    { label: 'F1', num: true, value: (x) => f4(x[1]?.f1) },
  ], rows, { cls: 'compact measures' }));
}

function overlap(o) {
  return card('PhysioNet overlap (runStat)',
    figures([['Recall (sensitivity)', f4(o.recall)], ['PPV', f4(o.ppv)], ['Gold spans', num(o.gold_spans)], ['System spans', num(o.system_spans)]]),
    o.recall_by_type?.length ? barChart({
      id: 'recall-by-type', title: 'Recall per gold type', showUnique: false, max: 1, format: (v) => v.toFixed(3), unit: '',
      data: o.recall_by_type.map((t) => ({ label: t.type, value: t.recall, title: `${t.type}: ${t.found} of ${t.total} found` })),
    }) : null);
}

function perTypeCard(r) {
  const types = r.per_type || [];
  if (!types.length) return null;
  const modes = [['strict', 'Strict'], ['relaxed', 'Relaxed'], ['token', 'Token']];
  const bars = barChart({
    id: 'per-type-f1', title: 'F1 per type (strict)', showUnique: false, max: 1, unit: '', key: 'strict entity matching; hover a bar for P/R and counts',
    format: (v) => v.toFixed(3),
    data: types.map((t) => ({
      label: t.type, value: t.strict.f1, color: categoryColor(t.category), group: t.category,
      title: `${t.type} (${t.category}) strict: P ${f4(t.strict.precision)}, R ${f4(t.strict.recall)}, F1 ${f4(t.strict.f1)}; TP ${t.strict.tp}, FP ${t.strict.fp}, FN ${t.strict.fn}`,
    })),
  });
  const t = table([
    { label: 'Type', value: (x) => h('span', { class: 'swatch-label' }, h('span', { class: 'swatch', vars: { '--c': categoryColor(x.category) }, 'aria-hidden': 'true' }), x.type) },
    { label: 'Category', value: (x) => x.category, rowHeader: false },
    { label: 'HIPAA', value: (x) => (x.hipaa ? 'yes' : '') },
    { label: 'Gold', num: true, value: (x) => num(x.strict.tp + x.strict.fn) },
    ...modes.flatMap(([k, l]) => [
      { label: `${l} P`, num: true, value: (x) => f4(x[k].precision) },
      { label: `${l} R`, num: true, value: (x) => f4(x[k].recall) },
      { label: `${l} F1`, num: true, cls: `${k}-f1`, value: (x) => h('strong', {}, f4(x[k].f1)) },
    ]),
  ], types, { cls: 'compact per-type' });
  return card('Per type', bars, t);
}

function errorsCard(r) {
  const e = r.errors?.total;
  if (!e) return null;
  const kinds = [
    ['correct', 'correct', e.correct],
    ['missed', 'missed', e.missed],
    ['tag-clash', 'tag-clash', e.tag_clash],
    ['span-clash', 'span-clash', e.span_clash],
    ['both-clash', 'both-clash', e.both_clash],
  ];
  const help = Object.fromEntries(ERROR_KINDS.map((k) => [k.kind, k.help]));
  help.correct = 'same offsets and type';
  const byType = Object.entries(r.errors.by_type || {}).sort((a, b) => b[1].gold - a[1].gold);
  return card('Error taxonomy (gold tags, Yeniterzi et al. 2010)',
    h('ul', { class: 'legend-list kinds error-kinds' }, kinds.map(([k, label, n]) => h('li', { 'data-kind': k, title: help[k] },
      h('span', { class: `swatch k-${k === 'correct' ? 'match' : k}`, 'aria-hidden': 'true' }),
      h('strong', {}, label), ' ', h('span', { class: 'count' }, num(n)),
      h('span', { class: 'muted' }, ` · ${pct(e.gold ? n / e.gold : 0)} of ${num(e.gold)} · ${help[k]}`)))),
    h('p', { class: 'exposure', 'data-exposed': e.exposed },
      h('strong', {}, `${num(e.exposed)} errors expose PHI`),
      ` (missed ${num(e.exposed_missed)}, span-clash ${num(e.exposed_span)}, both-clash ${num(e.exposed_both)}): `,
      `${num(e.exposed_chars)} of ${num(e.gold_chars)} PHI characters (${pct(e.gold_chars ? e.exposed_chars / e.gold_chars : 0)}) left uncovered. `,
      `${num(e.protected_count)} gold tags fully protected.`),
    h('details', {}, h('summary', {}, 'By type'), table([
      { label: 'Type', value: ([t]) => t },
      { label: 'Gold', num: true, value: ([, c]) => num(c.gold) },
      { label: 'Correct', num: true, value: ([, c]) => num(c.correct) },
      { label: 'Missed', num: true, value: ([, c]) => num(c.missed) },
      { label: 'Tag-clash', num: true, value: ([, c]) => num(c.tag_clash) },
      { label: 'Span-clash', num: true, value: ([, c]) => num(c.span_clash) },
      { label: 'Both-clash', num: true, value: ([, c]) => num(c.both_clash) },
      { label: 'Exposed', num: true, value: ([, c]) => num(c.exposed) },
    ], byType, { cls: 'compact' })));
}

function accuracyCard(r) {
  const a = r.token_accuracy;
  if (!a || !a.words) return null;
  return card('Token accuracy (every word of the notes)', table([
    { label: 'Measure', value: (x) => x[0] },
    { label: 'Value', num: true, value: (x) => x[1] },
    { label: 'Words', num: true, value: (x) => x[2] },
  ], [
    ['Accuracy (label-aware)', pct(a.accuracy), `${num(a.correct)} / ${num(a.words)}`],
    ['Accuracy (PHI or not)', pct(a.label_blind_accuracy), `${num(a.label_blind_correct)} / ${num(a.words)}`],
    ['PHI words masked', pct(a.phi_words ? a.masked_phi_words / a.phi_words : 0), `${num(a.masked_phi_words)} / ${num(a.phi_words)}`],
    ['Exposure (unmasked PHI words)', pct(a.exposure), `${num(a.phi_words - a.masked_phi_words)} / ${num(a.phi_words)}`],
  ], { cls: 'compact' }), h('p', { class: 'muted' }, `${num(a.documents)} documents with text.`));
}

function confusionCard(r) {
  const c = r.confusion;
  if (!c?.types?.length) return null;
  const rows = [...c.types, 'SPURIOUS'];
  const cols = [...c.types, 'MISSING'];
  const n = c.types.length;
  const diag = (i, j) => i === j && i < n;
  const map = heatmap({ id: 'confusion', title: 'Confusion matrix, strict offsets', rows, cols, cells: c.cells, diagonal: diag, rowTitle: 'gold', colTitle: 'system' });
  const cells = table([
    { label: 'gold \\ system', value: (x) => x.name },
    ...cols.map((col, j) => ({ label: col, num: true, value: (x) => (x.row[j] ? num(x.row[j]) : '·') })),
  ], rows.map((name, i) => ({ name, row: c.cells[i] || [] })), { cls: 'compact confusion-table' });
  return card('Confusion matrix',
    h('p', { class: 'muted' }, 'Rows: gold type at the offsets (SPURIOUS: a system tag at offsets no gold tag has); columns: the system’s type there (MISSING: no system tag with those offsets).'),
    map,
    h('details', {}, h('summary', {}, 'The same as a table'), cells));
}
