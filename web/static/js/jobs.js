// Background jobs on the dashboard: the fields every view asks for, a
// progress bar, what a finished job produced as links, and watch(), which
// follows a job through the `job(id)` subscription (falling back to polling
// when the websocket fails).

import { gql, subscribe } from './api.js';
import { h, href, num } from './dom.js';
import { downloadButton } from './downloads.js';
import { can } from './roles.js';

/**
 * jobNumber is a job's short number, its place among jobs counting from 1:
 * its id less the job table's offset (ent gives each table ids of its own,
 * 2^32 apart, so ids run to 11 digits). The command line takes either.
 */
export const jobNumber = (id) => String(BigInt(id) % (1n << 32n));

// What a finished job made, by its kind's type (Job.output): the fields
// resultLinks reads. A tagging's evaluation may be null where an
// evaluation's is not, hence its aliases.
const OUTPUT_FIELDS = `output { __typename
  ... on EvaluateOutput { evaluation f1 }
  ... on TagOutput { setName tagEvaluation: evaluation tagF1: f1 }
  ... on TrainOutput { modelName }
  ... on ImportOutput { corpusName }
  ... on DeriveOutput { corpusName }
  ... on ResynthesizeOutput { corpusName checkReport message }
  ... on DeidentifyOutput { corpusName shareable maxNoteLeakRate heldOut: risk { noteLeakRate noteDirectRate valuesLeakedPer1000 } }
  ... on ExportOutput { artifact bytes } }`;

export const JOB_FIELDS = `id kind status progress progressDone progressTotal message error attempts
  cancelRequested createdBy createdAt startedAt finishedAt params ${OUTPUT_FIELDS}`;

// check_failed: the job wrote its output and the output failed its check
// (a resynthesis whose corpus is now quarantined): a failure, shown as one.
export const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'check_failed']);
export const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'check_failed'];

/** The fraction done of a job: 1 once it succeeded, null while unknown. */
export function fraction(job) {
  if (job.status === 'succeeded') return 1;
  if (typeof job.progress === 'number') return Math.max(0, Math.min(1, job.progress));
  return null;
}

/** A progress bar (role=progressbar); indeterminate while the total is unknown. */
export function progressBar(job) {
  const f = fraction(job);
  const pctText = f === null ? (job.status === 'queued' ? 'queued' : '…') : `${Math.round(100 * f)}%`;
  return h('div', {
    class: `progress s-${job.status}${f === null ? ' indeterminate' : ''}`,
    role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100,
    'aria-valuenow': f === null ? undefined : Math.round(100 * f),
    'aria-label': `Job ${jobNumber(job.id)} progress`,
    'data-progress': f === null ? '' : String(f),
    vars: { '--p': f === null ? '0%' : `${(100 * f).toFixed(1)}%` },
  }, h('span', { class: 'track', 'aria-hidden': 'true' }, h('span', { class: 'bar' })), h('span', { class: 'pct' }, pctText));
}

export function statusBadge(status) {
  return h('span', { class: `status s-${status}` }, status.replace('_', ' '));
}

/** Links to what a finished job produced (model, annotation set, evaluation, corpus, download). */
export function resultLinks(job) {
  const r = job.output || {};
  const p = job.params || {};
  const out = [];
  const evaluation = r.evaluation ?? r.tagEvaluation;
  if (evaluation != null) {
    const score = r.f1 ?? r.tagF1;
    const f1 = typeof score === 'number' ? ` (F1 ${score.toFixed(3)})` : '';
    out.push(h('a', { href: href(['evaluations', String(evaluation)]), class: 'result-evaluation' }, `Evaluation${f1}`));
  }
  if (r.modelName) out.push(h('a', { href: href(['models'], { model: r.modelName }), class: 'result-model' }, `Model ${r.modelName}`));
  if (r.setName && p.corpus) out.push(h('a', { href: href(['corpus', p.corpus], { set: r.setName }) }, `Set ${r.setName}`));
  if (r.corpusName) out.push(h('a', { href: href(['corpus', r.corpusName]) }, `Corpus ${r.corpusName}`));
  if (r.artifact != null) {
    out.push(downloadButton(`/download/artifacts/${encodeURIComponent(r.artifact)}`,
      `Download${r.bytes ? ` (${num(Math.round(r.bytes / 1024))} KB)` : ''}`, { class: 'result-download', 'aria-label': `Download the result of job ${jobNumber(job.id)}` }));
  }
  if (r.checkReport && can('checkReport')) { // 0: no report
    out.push(downloadButton(`/download/artifacts/${encodeURIComponent(r.checkReport)}`, 'Check report (PHI)',
      { class: 'result-check-report', title: 'The full check report names original values: it is PHI.' }));
  }
  if (r.kind === 'residual-risk') {
    out.push(h('a', { href: href(['risk', String(job.id)]), class: 'result-risk' },
      `Residual risk (parrot precision ${r.parrot?.precision?.toFixed(3)}, AUC ${r.distinguishability?.auc?.toFixed(3)})`));
  }
  if (r.heldOut) {
    // deidentify: the risk the surrogate corpus may still hold.
    const pct = (x) => `${(100 * x).toFixed(2)}%`;
    const ceiling = typeof r.maxNoteLeakRate === 'number' ? `; the policy allows ${pct(r.maxNoteLeakRate)}` : '';
    out.push(h('span', { class: 'result-risk-left', title: 'The model’s held-out estimate at its privacy point, stated in the corpus’s provenance and datasheet.' },
      `Risk left: notes with a leak ${pct(r.heldOut.noteLeakRate)}, with a direct identifier ${pct(r.heldOut.noteDirectRate)}${ceiling}`
      + (r.shareable ? '' : ' — not shareable as it is')));
  }
  if (r.message) out.push(h('span', { class: 'muted' }, r.message));
  return out;
}

/** A one-line description of what a job works on, from its parameters. */
export function describe(job) {
  const p = job.params || {};
  switch (job.kind) {
    case 'train': return `${p.model} on ${p.corpus}/${p.split || 'train'}${p.config?.training?.max_iterations ? `, ≤${p.config.training.max_iterations} iterations` : ''}`;
    case 'tag': return `${p.corpus}${p.split ? '/' + p.split : ''} with ${p.model}`;
    case 'evaluate': return `${p.corpus}: ${p.system} vs ${p.gold || 'gold'}${p.metric ? ` (${p.metric})` : ''}`;
    case 'resynthesize': return `${p.corpus} → ${p.out} (seed ${p.seed ?? 1})`;
    case 'deidentify': return `${p.corpus} → ${p.out} with ${p.model}${p.targetRecall ? `, recall ${p.targetRecall}` : ''} (seed ${p.seed ?? 1})`;
    case 'export': return `${p.corpus}/${p.set || 'gold'} as ${p.format || 'i2b2'}`;
    case 'derive': return `${p.corpus}/${p.set || 'gold'} → ${p.out} by ${p.mapping || p.mappingLabel?.split(/[\\/]/).pop() || 'an uploaded mapping'}`;
    default: return Object.entries(p).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ');
  }
}

const JOB = `query Job($id: ID!) { jobs(where: {id: $id}) { edges { node { ${JOB_FIELDS} } } } }`;
const WATCH = `subscription Watch($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`;

/**
 * watch follows a job until it finishes or signal aborts: update(job) on
 * every change, live through the subscription; if the websocket fails, by
 * polling every 1.5 s (and onLive(false) says so).
 */
export function watch(id, { signal, update, onLive = () => {} }) {
  let stop = () => {};
  let timer;
  const poll = async () => {
    if (signal?.aborted) return;
    try {
      const { jobs } = await gql(JOB, { id }, { signal });
      const j = jobs.edges[0]?.node;
      if (j) update(j);
      if (j && FINAL.has(j.status)) return;
    } catch (e) {
      if (e.name === 'AbortError' || e.unauthorized) return; // signed out: the next page says so
    }
    timer = setTimeout(poll, 1500);
  };
  let last = null;
  stop = subscribe(WATCH, { id }, {
    next: (d) => { last = d.job; update(d.job); },
    error: () => { onLive(false); poll(); },
    complete: () => { if (!last || !FINAL.has(last.status)) poll(); },
  });
  onLive(true);
  signal?.addEventListener('abort', () => { stop(); clearTimeout(timer); });
  return () => { stop(); clearTimeout(timer); };
}
