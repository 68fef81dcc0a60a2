// #/runs?status=&kind= — background jobs: start training, tagging,
// resynthesis, evaluation and export from forms; every unfinished job is
// followed live through the job(id) subscription, with Cancel and Retry.

import { gql } from '../api.js';
import { h, date, href, card, field } from '../dom.js';
import { JOB_FIELDS, FINAL, STATUSES, progressBar, statusBadge, resultLinks, describe, watch, jobNumber } from '../jobs.js';
import { can, seesAllCorpora } from '../roles.js';
import { account } from '../session.js';
import { isSurrogate } from '../corpus-kind.js';

const JOBS = `query Jobs($where: JobWhereInput) {
  jobs(first: 100, where: $where, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    edges { node { ${JOB_FIELDS} } }
  }
}`;

const OPTIONS = `query RunOptions {
  corpora(first: 500, orderBy: {field: NAME}) { edges { node { name kind tagset annotationSets { name kind } } } }
  models(first: 500, orderBy: {field: CREATED_AT, direction: DESC}) { edges { node { name kind trainingCorpus labels } } }
  formats { name description }
  jobKinds
}`;

const START = {
  train: `mutation($input: TrainingInput!) { job: startTraining(input: $input) { ${JOB_FIELDS} } }`,
  tag: `mutation($input: TaggingInput!) { job: startTagging(input: $input) { ${JOB_FIELDS} } }`,
  resynthesize: `mutation($input: ResynthesisInput!) { job: startResynthesis(input: $input) { ${JOB_FIELDS} } }`,
  deidentify: `mutation($input: DeidentifyInput!) { job: deidentify(input: $input) { ${JOB_FIELDS} } }`,
  evaluate: `mutation($input: EvaluationInput!) { job: startEvaluation(input: $input) { ${JOB_FIELDS} } }`,
  export: `mutation($corpus: String!, $set: String!, $format: String!) { job: startExport(corpus: $corpus, set: $set, format: $format) { ${JOB_FIELDS} } }`,
};
const CANCEL = `mutation($id: ID!) { job: cancelJob(id: $id) { ${JOB_FIELDS} } }`;
const RETRY = `mutation($id: ID!) { job: retryJob(id: $id) { ${JOB_FIELDS} } }`;

const MAX_LIVE = 8; // unfinished jobs of the list followed live at once

export async function render({ query, signal, title }) {
  title('Runs');
  const where = {};
  if (STATUSES.includes(query.status)) where.status = query.status;
  // The parts of a split job (a tagging of a big corpus has hundreds) show
  // in its progress; they are listed when asked for by their kind.
  if (query.kind) where.kind = query.kind;
  else where.kindNEQ = 'part';
  const [jobsData, opts] = await Promise.all([
    gql(JOBS, { where }, { signal }),
    gql(OPTIONS, {}, { signal }),
  ]);
  const state = {
    corpora: opts.corpora.edges.map((e) => e.node),
    models: opts.models.edges.map((e) => e.node),
    formats: opts.formats.map((f) => f.name),
  };

  // The job list: rows keyed by id, updated in place.
  const rows = new Map();
  const tbody = h('tbody');
  const empty = h('p', { class: 'empty', hidden: jobsData.jobs.edges.length > 0 }, 'No runs yet. Start one above.');
  const live = h('p', { class: 'muted live-note', role: 'status' });
  let watching = 0;
  let total = jobsData.jobs.totalCount;
  const count = h('span', { class: 'job-count' }, String(total));

  const follow = (job) => {
    if (FINAL.has(job.status)) return;
    watching++;
    watch(job.id, {
      signal,
      update: (j) => {
        upsert(j);
        if (FINAL.has(j.status)) {
          watching--;
          if (j.status === 'succeeded' || j.status === 'check_failed') refreshOptions();
        }
      },
      onLive: (ok) => { if (!ok) live.textContent = 'The live connection failed: checking unfinished runs every 1.5 s instead.'; },
    });
  };

  const upsert = (job, { prepend = false } = {}) => {
    const old = rows.get(job.id);
    const tr = jobRow(job, { cancel, retry });
    rows.set(job.id, tr);
    if (old) {
      const focused = old.contains(document.activeElement) ? document.activeElement.dataset.action : null;
      old.replaceWith(tr);
      if (focused) tr.querySelector(`[data-action="${focused}"]`)?.focus();
    } else if (prepend) {
      tbody.prepend(tr);
      count.textContent = String(++total);
    }
    else tbody.append(tr);
    empty.hidden = true;
  };

  const act = async (mutation, job, verb) => {
    try {
      const { job: j } = await gql(mutation, { id: job.id });
      upsert(j);
      if (verb === 'retry') follow(j);
    } catch (e) {
      flash(rows.get(job.id), `Could not ${verb} job ${jobNumber(job.id)}: ${e.message}`);
    }
  };
  const cancel = (job) => act(CANCEL, job, 'cancel');
  const retry = (job) => act(RETRY, job, 'retry');

  for (const e of jobsData.jobs.edges) upsert(e.node);
  for (const e of jobsData.jobs.edges) {
    if (watching < MAX_LIVE) follow(e.node);
  }

  // Forms.
  const forms = {};
  const started = (job) => {
    upsert(job, { prepend: true });
    follow(job);
    rows.get(job.id)?.querySelector('a, button')?.focus({ preventScroll: true });
  };
  const refreshOptions = async () => {
    try {
      const o = await gql(OPTIONS, {}, { signal });
      state.corpora = o.corpora.edges.map((e) => e.node);
      state.models = o.models.edges.map((e) => e.node);
      for (const f of Object.values(forms)) f.refresh();
    } catch { /* keep the old lists */ }
  };
  // Only the runs the role may start (resynthesis is for curators).
  const makers = { train: trainForm, tag: tagForm, resynthesize: resynthForm, deidentify: deidentifyForm, evaluate: evaluateForm, export: exportForm };
  const startable = Object.keys(START).filter((k) => can(k));
  for (const k of startable) forms[k] = makers[k](state, started);
  if (query.model && forms.tag) {
    const m = forms.tag.el.querySelector('#tag-model');
    if ([...m.options].some((o) => o.value === query.model)) m.value = query.model;
  }

  const labels = { train: 'Training', tag: 'Tagging', resynthesize: 'Resynthesis', deidentify: 'De-identify', evaluate: 'Evaluation', export: 'Export' };
  let chosen = startable.includes(query.start) ? query.start : startable[0];
  const tabs = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Kind of run to start' });
  const show = (kind) => {
    chosen = kind;
    for (const b of tabs.children) b.setAttribute('aria-pressed', String(b.dataset.kind === kind));
    for (const [k, f] of Object.entries(forms)) f.el.hidden = k !== kind;
  };
  tabs.append(...startable.map((k) => h('button', { type: 'button', 'data-kind': k, onclick: () => show(k) }, labels[k])));
  show(chosen);

  const filterSel = (id, label, values, current, key) => h('label', {}, label,
    h('select', {
      id, onchange: (e) => { location.hash = href(['runs'], { ...where, [key]: e.target.value }); },
    }, h('option', { value: '' }, 'any'), values.map((v) => h('option', { value: v, selected: v === current }, v))));
  const kinds = [...new Set([...opts.jobKinds, ...jobsData.jobs.edges.map((e) => e.node.kind), query.kind].filter(Boolean))];

  return h('div', { class: 'page runs-page' },
    h('h1', {}, 'Runs'),
    card('Start a run', state.corpora.length
      ? [tabs, Object.values(forms).map((f) => f.el)]
      : h('p', { class: 'empty' }, 'There is no corpus you may run anything on yet: see ', h('a', { href: '#/' }, 'Corpora'), '.')),
    card(['Jobs (', count, ')'],
      h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() },
        filterSel('filter-status', 'Status ', STATUSES, where.status, 'status'),
        filterSel('filter-kind', 'Kind ', kinds, where.kind, 'kind')),
      live,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'compact jobs' },
          h('caption', {}, 'Newest first; unfinished runs update live.'),
          h('thead', {}, h('tr', {}, ['Job', 'Kind', 'What', 'Status', 'Progress', 'Attempts', 'Created', 'Message', 'Result', ''].map((l) =>
            h('th', { scope: 'col', class: l === 'Attempts' ? 'num' : '' }, l)))),
          tbody)),
      empty));
}

function flash(row, message) {
  const cell = row?.querySelector('td.message');
  if (cell) cell.append(h('div', { class: 'error-inline', role: 'alert' }, message));
  else alert(message);
}

function jobRow(job, { cancel, retry }) {
  const canCancel = !FINAL.has(job.status) && !job.cancelRequested;
  const canRetry = job.status === 'failed' || job.status === 'cancelled';
  return h('tr', { 'data-job': job.id, 'data-status': job.status, 'data-kind': job.kind },
    h('th', { scope: 'row', title: `job id ${job.id}` }, jobNumber(job.id)),
    h('td', {}, job.kind),
    h('td', { class: 'what' }, describe(job)),
    h('td', {}, statusBadge(job.status), job.cancelRequested && !FINAL.has(job.status) ? h('span', { class: 'muted' }, ' stopping…') : null),
    h('td', { class: 'progress-cell' }, progressBar(job)),
    h('td', { class: 'num' }, String(job.attempts)),
    h('td', { title: job.createdAt }, date(job.createdAt), ' ', h('span', { class: 'muted' }, (job.createdAt || '').slice(11, 19))),
    h('td', { class: 'message' }, job.error ? h('span', { class: 'job-error' }, job.error) : job.message),
    h('td', { class: 'result' }, FINAL.has(job.status) ? resultLinks(job).flatMap((l, i) => (i ? [' · ', l] : [l])) : null),
    h('td', { class: 'row-actions' },
      canCancel ? h('button', { type: 'button', 'data-action': 'cancel', onclick: () => cancel(job), 'aria-label': `Cancel job ${jobNumber(job.id)}` }, 'Cancel') : null,
      canRetry ? h('button', { type: 'button', 'data-action': 'retry', onclick: () => retry(job), 'aria-label': `Retry job ${jobNumber(job.id)}` }, 'Retry') : null));
}

// ---- forms -----------------------------------------------------------------


// fillSelect replaces a select's options, keeping the user's own choice
// when it is still there, else choosing `prefer` (else the first option).
function fillSelect(sel, options, { prefer } = {}) {
  const prev = sel.dataset.chosen ? sel.value : '';
  sel.replaceChildren(...options.map((o) => (typeof o === 'string' ? h('option', { value: o }, o) : h('option', { value: o.value }, o.label))));
  const has = (v) => [...sel.options].some((o) => o.value === v);
  if (prev && has(prev)) sel.value = prev;
  else if (prefer && has(prefer)) sel.value = prefer;
  if (!sel.dataset.listening) {
    sel.dataset.listening = '1';
    sel.addEventListener('change', () => { sel.dataset.chosen = '1'; });
  }
}
const unchoose = (...sels) => sels.forEach((x) => delete x.dataset.chosen);

const setsOf = (state, corpus) => state.corpora.find((c) => c.name === corpus)?.annotationSets || [];
const setOpts = (sets) => sets.map((s) => ({ value: s.name, label: `${s.name} (${s.kind})` }));
const bestCorpus = (state) => (state.corpora.find((c) => c.name === 'demo') || state.corpora.find((c) => !isSurrogate(c)) || state.corpora[0])?.name;

/**
 * runForm builds one form: fields, a submit that calls START[kind] with
 * vars(), and a status line for errors. refresh() refills its selects.
 */
function runForm(kind, name, fields, vars, onStarted, refresh) {
  const status = h('p', { class: 'form-status', role: 'status' });
  const submit = h('button', { type: 'submit' }, `Start ${name}`);
  const el = h('form', {
    class: 'run-form', id: `form-${kind}`, 'aria-label': `Start ${name}`,
    onsubmit: async (e) => {
      e.preventDefault();
      status.className = 'form-status';
      let v;
      try {
        v = vars();
      } catch (err) {
        status.className = 'form-status error-inline';
        status.textContent = err.message;
        return;
      }
      submit.disabled = true;
      status.textContent = 'Starting…';
      try {
        const { $query, ...variables } = v;
        const { job } = await gql($query || START[kind], variables);
        status.textContent = `Started job ${jobNumber(job.id)}.`;
        onStarted(job);
      } catch (err) {
        status.className = 'form-status error-inline';
        status.setAttribute('role', 'alert');
        status.textContent = `Could not start: ${err.message}`;
      } finally {
        submit.disabled = false;
      }
    },
  }, h('div', { class: 'fields' }, fields), h('div', { class: 'form-actions' }, submit, status));
  refresh();
  return { el, refresh };
}

function corpusSelect(state, id, onchange) {
  const sel = h('select', { id, name: 'corpus', required: true, onchange });
  const refill = () => fillSelect(sel, state.corpora.map((c) => c.name), { prefer: bestCorpus(state) });
  return { sel, refill };
}

function trainForm(state, onStarted) {
  const corpus = corpusSelect(state, 'train-corpus', () => { unchoose(set); sets(); });
  const split = h('select', { id: 'train-split' }, ['train', 'dev', 'test', 'all'].map((s) => h('option', { value: s }, s)));
  const set = h('select', { id: 'train-set' });
  const model = h('input', { id: 'train-model', required: true, autocomplete: 'off', placeholder: 'e.g. crf-demo', pattern: '[A-Za-z0-9._\\-]+', title: 'Letters, digits, dot, dash and underscore' });
  const iters = h('input', { id: 'train-iterations', type: 'number', min: 1, max: 10000, step: 1, placeholder: '150 (default)' });
  const sets = () => fillSelect(set, setOpts(setsOf(state, corpus.sel.value)), { prefer: 'gold' });
  // An account that does not see every corpus names its models under its
  // own name (package auth, ownModelName): a name taken by a model it may
  // not see would otherwise tell it that model exists.
  const owner = seesAllCorpora() ? '' : `${account()?.name}:`;
  return runForm('train', 'training', [
    field('Corpus', corpus.sel), field('Split', split), field('Annotation set', set, 'the spans to learn from'),
    field('Model name', model, owner ? `saved as ${owner}NAME, under your account` : undefined),
    field('Max. iterations', iters, 'optional: L-BFGS iterations'),
  ], () => {
    const input = { corpus: corpus.sel.value, split: split.value, set: set.value || 'gold', model: owner + model.value.trim() };
    if (!model.value.trim()) throw new Error('Give the model a name.');
    if (iters.value) {
      const n = Number(iters.value);
      if (!Number.isInteger(n) || n < 1) throw new Error('Max. iterations must be a whole number ≥ 1.');
      input.config = { training: { max_iterations: n } };
    }
    return { input };
  }, onStarted, () => { corpus.refill(); sets(); });
}

function tagForm(state, onStarted) {
  const model = h('select', { id: 'tag-model', required: true });
  const corpus = corpusSelect(state, 'tag-corpus');
  const split = h('select', { id: 'tag-split' }, h('option', { value: '' }, 'every document'), ['train', 'dev', 'test', 'unassigned'].map((s) => h('option', { value: s }, s)));
  const set = h('input', { id: 'tag-set', autocomplete: 'off', placeholder: 'system-MODEL (default)' });
  const bias = h('input', { id: 'tag-bias', type: 'number', step: 'any', placeholder: 'e.g. 0.5', autocomplete: 'off' });
  const curve = h('input', { id: 'tag-curve', placeholder: 'e.g. -1, 0, 0.4, 1, 2, 4', autocomplete: 'off' });
  const point = h('select', { id: 'tag-point' }, h('option', { value: 'balanced' }, 'balanced (best F1)'), h('option', { value: 'privacy' }, 'privacy (recall first, for a release)'));
  const target = h('input', { id: 'tag-target', type: 'number', step: 'any', min: '0.5', max: '1', placeholder: 'e.g. 0.995 (privacy only)', autocomplete: 'off' });
  const noModels = h('p', { class: 'muted', hidden: true }, 'No models yet: train one first (Training).');
  return runForm('tag', 'tagging', [
    field('Model', model), field('Corpus', corpus.sel), field('Split', split), field('System set', set, 'optional'),
    field('Recall bias', bias, 'optional: added to every type’s scores; > 0 finds more'),
    field('Recall-bias curve', curve, 'optional: biases to score the model at on gold, for a precision/recall curve'),
    field('Operating point', point, 'privacy calls PHI what the model doubts, to the recall calibrated at training'),
    field('Target recall', target, 'optional, privacy point: recall of PHI characters to reach'), noModels,
  ], () => {
    if (!model.value) throw new Error('Choose a model (train one first if there is none).');
    const input = { model: model.value, corpus: corpus.sel.value, operatingPoint: point.value };
    if (target.value !== '') {
      const r = Number(target.value);
      if (point.value !== 'privacy') throw new Error('Target recall: only at the privacy point.');
      if (!(r > 0.5 && r <= 1)) throw new Error('Target recall: a fraction in (0.5, 1], such as 0.995.');
      input.targetRecall = r;
    }
    if (split.value) input.split = split.value;
    if (set.value.trim()) input.set = set.value.trim();
    if (curve.value.trim()) {
      input.curve = curve.value.split(',').map((x) => x.trim()).filter(Boolean).map(Number);
      if (!input.curve.every(Number.isFinite)) throw new Error('Recall-bias curve: give numbers separated by commas.');
    }
    if (bias.value !== '') {
      const b = Number(bias.value);
      if (!Number.isFinite(b)) throw new Error('Recall bias must be a number.');
      // The server rejects numbers inside a Map given as a variable (they
      // arrive as json.Number), but takes literals: write the bias into the
      // query, once per label of the model (a literal key cannot be "*").
      const labels = (state.models.find((m) => m.name === model.value)?.labels || []).filter((l) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(l));
      if (labels.length) {
        const lit = `{${labels.map((l) => `${l}: ${b}`).join(', ')}}`;
        return {
          $query: `mutation($model: String!, $corpus: String!, $split: String, $set: String, $curve: [Float!], $point: String, $target: Float) {
            job: startTagging(input: {model: $model, corpus: $corpus, split: $split, set: $set, curve: $curve, operatingPoint: $point, targetRecall: $target, recallBias: ${lit}}) { ${JOB_FIELDS} } }`,
          model: input.model, corpus: input.corpus, split: input.split ?? null, set: input.set ?? null, curve: input.curve ?? null,
          point: input.operatingPoint, target: input.targetRecall ?? null,
        };
      }
      input.recallBias = { '*': b };
    }
    return { input };
  }, onStarted, () => {
    corpus.refill();
    fillSelect(model, state.models.map((m) => ({ value: m.name, label: `${m.name} (${m.kind}${m.trainingCorpus ? ', ' + m.trainingCorpus : ''})` })));
    noModels.hidden = state.models.length > 0;
  });
}

/**
 * policyField is a resynthesis policy given as JSON, typed or read from a
 * file (as resynth --policy FILE takes it; resynth --print-policy prints the
 * built-in one to start from); empty is the built-in policy. value() throws
 * a message naming where the JSON breaks.
 */
function policyField(id) {
  const text = h('textarea', { id, rows: 3, spellcheck: 'false', placeholder: '{"types": {"AGE": {"strategy": "placeholder"}, "EMAIL": {"strategy": "redact"}}}' });
  const file = h('input', { id: `${id}-file`, type: 'file', accept: '.json,application/json', 'aria-label': 'Read the policy from a file',
    onchange: async () => { if (file.files[0]) text.value = await file.files[0].text(); } });
  const el = field('Policy (JSON)', text, 'optional: the built-in policy when empty; per type a surrogate strategy, keep, or the masks redact, placeholder and hash (docs/resynthesis.md)');
  el.classList.add('field-wide');
  el.append(file);
  const value = () => {
    const t = text.value.trim();
    if (!t) return null;
    try {
      const v = JSON.parse(t);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('a policy is a JSON object');
      return v;
    } catch (e) {
      throw new Error(`Policy: ${e.message}`);
    }
  };
  return { el, value };
}

function resynthForm(state, onStarted) {
  const corpus = corpusSelect(state, 'resynth-corpus', () => { if (!out.dataset.touched) out.value = `${corpus.sel.value}-surrogate`; });
  const out = h('input', { id: 'resynth-out', required: true, autocomplete: 'off', oninput: () => { out.dataset.touched = '1'; } });
  const seed = h('input', { id: 'resynth-seed', type: 'number', step: 1, value: 1 });
  const policy = policyField('resynth-policy');
  return runForm('resynthesize', 'resynthesis', [
    field('Corpus', corpus.sel), field('Surrogate corpus', out, 'created, or extended with new notes'), field('Seed', seed),
    policy.el,
  ], () => {
    const n = Number(seed.value || 1);
    if (!Number.isInteger(n)) throw new Error('The seed must be a whole number.');
    if (!out.value.trim()) throw new Error('Name the surrogate corpus.');
    const input = { corpus: corpus.sel.value, out: out.value.trim(), seed: n };
    const p = policy.value();
    if (p) input.policy = p;
    return { input };
  }, onStarted, () => { corpus.refill(); if (!out.dataset.touched) out.value = `${corpus.sel.value}-surrogate`; });
}

// deidentifyForm starts the hospital's path in one job: notes nobody
// annotated, tagged at a calibrated model's privacy point, resynthesized
// and checked; the job's result states the risk left.
function deidentifyForm(state, onStarted) {
  const model = h('select', { id: 'deid-model', required: true });
  const corpus = corpusSelect(state, 'deid-corpus', () => { if (!out.dataset.touched) out.value = `${corpus.sel.value}-deid`; });
  const out = h('input', { id: 'deid-out', required: true, autocomplete: 'off', oninput: () => { out.dataset.touched = '1'; } });
  const target = h('input', { id: 'deid-target', type: 'number', step: 'any', min: '0.5', max: '1', placeholder: 'the model’s calibrated one (default)', autocomplete: 'off' });
  const seed = h('input', { id: 'deid-seed', type: 'number', step: 1, value: 1 });
  const noModels = h('p', { class: 'muted', hidden: true }, 'No built-in model yet: train one first (Training); training calibrates its privacy point.');
  const policy = policyField('deid-policy');
  return runForm('deidentify', 'de-identification', [
    field('Notes', corpus.sel), field('Model', model, 'a built-in model with a calibrated privacy point'),
    field('Surrogate corpus', out, 'a new corpus'), field('Target recall', target, 'optional: recall of PHI characters, not below the calibrated one'),
    field('Seed', seed), noModels, policy.el,
  ], () => {
    if (!model.value) throw new Error('Choose a model (train one first if there is none).');
    if (!out.value.trim()) throw new Error('Name the surrogate corpus.');
    const n = Number(seed.value || 1);
    if (!Number.isInteger(n)) throw new Error('The seed must be a whole number.');
    const input = { corpus: corpus.sel.value, model: model.value, out: out.value.trim(), seed: n };
    if (target.value !== '') {
      const r = Number(target.value);
      if (!(r > 0.5 && r <= 1)) throw new Error('Target recall: a fraction in (0.5, 1], such as 0.995.');
      input.targetRecall = r;
    }
    const p = policy.value();
    if (p) input.policy = p; // maxNoteLeakRate: the ceiling sharing keeps to
    return { input };
  }, onStarted, () => {
    corpus.refill();
    if (!out.dataset.touched) out.value = `${corpus.sel.value}-deid`;
    const builtin = state.models.filter((m) => m.kind !== 'external');
    fillSelect(model, builtin.map((m) => ({ value: m.name, label: `${m.name}${m.trainingCorpus ? ' (' + m.trainingCorpus + ')' : ''}` })));
    noModels.hidden = builtin.length > 0;
  });
}

function evaluateForm(state, onStarted) {
  const corpus = corpusSelect(state, 'eval-corpus', () => { unchoose(gold, system); sets(); });
  const gold = h('select', { id: 'eval-gold' });
  const system = h('select', { id: 'eval-system' });
  const metric = h('select', { id: 'eval-metric', onchange: () => { metric.dataset.touched = '1'; } },
    ['i2b2', 'meddocan', 'physionet'].map((m) => h('option', { value: m }, m)));
  const sets = () => {
    // The corpus's own scorer, as the server's default: the i2b2 script's
    // rows have none of a MEDDOCAN corpus's labels.
    const tagset = state.corpora.find((c) => c.name === corpus.sel.value)?.tagset;
    if (!metric.dataset.touched) metric.value = tagset === 'meddocan' ? 'meddocan' : 'i2b2';
    const ss = setsOf(state, corpus.sel.value);
    fillSelect(gold, setOpts(ss), { prefer: ss.some((x) => x.name === 'gold') ? 'gold' : ss.find((x) => x.kind === 'gold')?.name });
    fillSelect(system, setOpts(ss), { prefer: (ss.find((x) => x.name !== gold.value && x.kind === 'system') || ss.find((x) => x.name !== gold.value))?.name });
  };
  return runForm('evaluate', 'evaluation', [
    field('Corpus', corpus.sel), field('Gold set', gold), field('System set', system), field('Metric', metric),
  ], () => {
    if (!gold.value || !system.value) throw new Error('This corpus needs a gold and a system annotation set.');
    if (gold.value === system.value) throw new Error('Choose two different sets.');
    return { input: { corpus: corpus.sel.value, gold: gold.value, system: system.value, metric: metric.value } };
  }, onStarted, () => { corpus.refill(); sets(); });
}

function exportForm(state, onStarted) {
  const corpus = corpusSelect(state, 'export-corpus', () => { unchoose(set); sets(); });
  const set = h('select', { id: 'export-set' });
  const format = h('select', { id: 'export-format' });
  const sets = () => fillSelect(set, setOpts(setsOf(state, corpus.sel.value)), { prefer: 'gold' });
  return runForm('export', 'export', [
    field('Corpus', corpus.sel), field('Annotation set', set), field('Format', format),
  ], () => {
    if (!set.value) throw new Error('This corpus has no annotation set to export.');
    return { corpus: corpus.sel.value, set: set.value, format: format.value };
  }, onStarted, () => {
    corpus.refill();
    sets();
    fillSelect(format, state.formats.length ? state.formats : ['i2b2'], { prefer: 'i2b2' });
  });
}
