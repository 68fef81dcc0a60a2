// The "Provenance" section of the corpus, evaluation, model and release
// pages: the lineage(id) chain from the object back to its imported sources,
// each step with the job that made it (kind, status, parameters such as the
// seed) and the code version, linked to the step's own page where it has one.

import { gql, schema } from './api.js';
import { h, href, card, date } from './dom.js';
import { statusBadge, jobNumber } from './jobs.js';

const LINEAGE = `query Lineage($id: ID!) {
  lineage(id: $id) { kind id name provenance origin parameters codeVersion job { id kind status codeVersion createdAt finishedAt } }
}`;

/** The page of a lineage step, or null. */
export function stepLink(step) {
  const p = step.parameters || {};
  const prov = step.provenance || {};
  switch (step.kind) {
    case 'Corpus': return href(['corpus', step.name]);
    case 'AnnotationSet': {
      const corpus = prov.corpus || p.corpus;
      return typeof corpus === 'string' ? href(['corpus', corpus], { set: step.name }) : null;
    }
    case 'Model': return href(['models', step.name]);
    case 'Evaluation': return href(['evaluations', step.id]);
    case 'Release': return href(['releases', step.name]);
    case 'Job': return href(['runs'], { kind: step.name });
    default: return null;
  }
}

const LABELS = { Corpus: 'corpus', AnnotationSet: 'annotation set', Model: 'model', Evaluation: 'evaluation', Release: 'release', Job: 'job' };

/**
 * readable writes a provenance value for people: a label rule of a
 * resynthesis ({Label, Strategy, Via, As}) as "LABEL: strategy (via M as
 * X)", other objects as "key value" pairs without their empty ones, lists
 * joined by semicolons; key's null policy is the built-in one.
 */
export function readable(v, key = '') {
  if (v === null || v === undefined) return key === 'policy' ? 'built-in (the papers’)' : '—';
  if (Array.isArray(v)) return v.length ? v.map((x) => readable(x)).join('; ') : 'none';
  if (typeof v !== 'object') return String(v);
  if (typeof v.Label === 'string' && 'Strategy' in v) {
    return `${v.Label}: ${v.Strategy || 'kept'}${v.Via ? ` (via ${v.Via} as ${v.As})` : ''}`;
  }
  const parts = Object.entries(v).filter(([, x]) => x !== '' && x !== null && x !== undefined && !(Array.isArray(x) && !x.length))
    .map(([k, x]) => `${k} ${typeof x === 'object' ? `(${readable(x, k)})` : readable(x, k)}`);
  return parts.length ? parts.join(', ') : '—';
}

// A provenance's keys in words (the corpus page's Provenance line); a key
// not named here shows as it is.
const PROVENANCE_WORDS = {
  source: 'source', format: 'format', file: 'file', note: 'note', patients: 'patients', documents: 'notes',
  seed: 'seed', from: 'made from', set: 'from annotation set', tagset: 'tag set', policy: 'policy', language: 'language',
  labels: 'label rules', newMappings: 'new surrogate values', reused: 'surrogates reused from', redonePatients: 'patients redrawn',
  unannotatedDocuments: 'notes without annotations, by split', idScope: 'note ids', codeVersion: 'code version',
};
const SOURCES = { synth: 'synthesized by deidcorpus', resynthesis: 'resynthesis of another corpus', import: 'imported', demo: 'the demo' };

/**
 * provenanceList writes a corpus's provenance for people: each key in
 * words, values readable, keys another card shows (skip) left out.
 */
export function provenanceList(p, { skip = () => false, link = () => null } = {}) {
  const entries = Object.entries(p || {}).filter(([k, v]) => !skip(k, v) && v !== undefined);
  if (!entries.length) return null;
  return h('dl', { class: 'kv provenance-list' }, entries.map(([k, v]) => h('div', { 'data-key': k },
    h('dt', {}, PROVENANCE_WORDS[k] || k),
    h('dd', { title: typeof v === 'object' && v !== null ? readable(v, k) : undefined },
      link(k, v) || (k === 'source' && SOURCES[v] ? SOURCES[v] : value(v, k))))));
}

function value(v, key) {
  const s = readable(v, key);
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
}

// keyValues lists a map as "key value" pairs; objects in one line, shortened
// (the title holds the whole value).
function keyValues(map, cls, skip = () => false) {
  const entries = Object.entries(map || {}).filter(([k, v]) => !skip(k, v));
  if (!entries.length) return null;
  return h('dl', { class: `kv ${cls}` }, entries.map(([k, v]) => h('div', { 'data-key': k },
    h('dt', {}, k),
    h('dd', { title: typeof v === 'object' && v !== null ? readable(v, k) : undefined }, value(v, k)))));
}

// How a corpus came, in words, when no job the viewer may see made it (a
// researcher does not see the resynthesis run, nor its source).
const ORIGINS = {
  import: 'imported',
  created: 'created empty, then filled',
  derived: 'derived through a tag-set mapping',
  resynthesis: 'made by resynthesis (its run and its source are not shown to you)',
  synth: 'synthesized',
  demo: 'loaded with the demo',
};

function madeBy(step) {
  if (step.kind === 'Release') return 'frozen by createRelease';
  return ORIGINS[step.origin] || 'made by no job (imported or loaded)';
}

function stepView(step, i) {
  const link = stepLink(step);
  const name = link ? h('a', { href: link, class: 'step-link' }, step.name) : h('span', { class: 'step-name' }, step.name);
  const j = step.job;
  const code = step.codeVersion || j?.codeVersion;
  // A step made by no job records how it came (imported, synthesized, frozen).
  const prov = j ? null : keyValues(step.provenance, 'provenance-kv', (k, v) => k === 'codeVersion' || (typeof v === 'object' && v !== null && k !== 'options'));
  return h('li', { class: 'step', 'data-kind': step.kind, 'data-id': step.id },
    h('div', { class: 'step-head' },
      h('span', { class: `kind k-${step.kind}` }, LABELS[step.kind] || step.kind), ' ', name,
      i === 0 ? h('span', { class: 'muted' }, ' (this page)') : null),
    j
      ? h('div', { class: 'step-job', 'data-job': j.id, 'data-status': j.status },
        'made by job ', h('a', { href: href(['runs'], { kind: j.kind }), title: `Runs of kind ${j.kind}` }, `#${jobNumber(j.id)}`),
        ` (${j.kind}) `, statusBadge(j.status),
        j.finishedAt ? h('span', { class: 'muted' }, ` finished ${date(j.finishedAt)}`) : null)
      : h('div', { class: 'step-job muted' }, madeBy(step)),
    keyValues(step.parameters, 'params'),
    prov,
    code ? h('div', { class: 'code-version' }, 'code version ', h('code', {}, code)) : null);
}

/** lineageView draws a chain of steps. */
export function lineageView(steps) {
  if (!steps.length) return h('p', { class: 'empty' }, 'No provenance is recorded for this object.');
  return h('ol', { class: 'lineage', 'aria-label': 'Provenance chain, newest first' }, steps.map(stepView));
}

/**
 * provenanceCard resolves to the Provenance section of the object with this
 * global id; it never rejects (but for an abort): a failure becomes a message
 * in the section, and a server without the lineage query gives null.
 */
export async function provenanceCard(id, { signal } = {}) {
  try {
    const api = await schema();
    if (!api.query.has('lineage')) return null;
    const { lineage } = await gql(LINEAGE, { id: String(id) }, { signal });
    return h('section', { class: 'card provenance-card', id: 'provenance' },
      h('h2', {}, 'Provenance'),
      h('p', { class: 'muted' }, 'Where this came from: each object, the job that made it with its parameters, and the code version, back to the imported sources.'),
      lineageView(lineage));
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    return h('section', { class: 'card provenance-card', id: 'provenance' },
      h('h2', {}, 'Provenance'),
      h('p', { class: 'error-inline', role: 'alert' }, `Could not load the provenance: ${e.message}`));
  }
}
