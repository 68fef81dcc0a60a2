// #/ — every corpus with its counts.

import { gql } from '../api.js';
import { h, num, date, href, table, card, field } from '../dom.js';
import { JOB_FIELDS, progressBar, statusBadge, resultLinks, watch, jobNumber, FINAL } from '../jobs.js';
import { account } from '../session.js';
import { can } from '../roles.js';
import { isSurrogate } from '../corpus-kind.js';

const CORPORA = `query Corpora {
  corpora(first: 500, orderBy: {field: NAME}) {
    totalCount
    edges { node {
      id name kind checkStatus checkFindings tagset description createdAt provenance
      annotationSets { name kind }
      patients { totalCount }
      documents { totalCount }
    } }
  }
}`;

// One aliased statistics field per corpus: one more request, not one per corpus.
function statsQuery(corpora) {
  const fields = corpora.map((c, i) => `c${i}: corpusStatistics(corpus: "${c.id}", set: "gold", by: [CATEGORY]) { tokens spans uniqueSpans shareOfDocumentsWithPHI }`);
  return `query CorporaStats { ${fields.join('\n')} }`;
}

export async function render({ signal, title }) {
  title('Corpora');
  const data = await gql(CORPORA, {}, { signal });
  const corpora = data.corpora.edges.map((e) => e.node);
  const withGold = corpora.filter((c) => (c.annotationSets || []).some((s) => s.name === 'gold'));
  const stats = {};
  if (withGold.length) {
    // A corpus the statistics fail for still gets its row, with dashes.
    const { data: sd } = await gql(statsQuery(withGold), {}, { signal, partial: true });
    withGold.forEach((c, i) => { stats[c.id] = sd?.[`c${i}`]; });
  }
  const source = (c) => c.provenance?.source || '';
  return h('div', { class: 'page' },
    h('h1', {}, 'Corpora'),
    corpora.length
      ? card(null, table([
        { label: 'Corpus', value: (c) => h('a', { href: href(['corpus', c.name]), class: 'corpus-link' }, c.name) },
        { label: 'Kind', value: (c) => [h('span', { class: `corpus-kind k-${c.kind}`, title: isSurrogate(c) ? 'PHI replaced by resynthesis' : 'original text: real PHI' }, c.kind), quarantineBadge(c)] },
        { label: 'Tag set', value: (c) => c.tagset },
        { label: 'Patients', num: true, value: (c) => num(c.patients.totalCount) },
        { label: 'Documents', num: true, value: (c) => num(c.documents.totalCount) },
        { label: 'Tokens', num: true, value: (c) => num(stats[c.id]?.tokens) },
        { label: 'PHI spans (gold)', num: true, value: (c) => num(stats[c.id]?.spans) },
        { label: 'Unique PHI', num: true, value: (c) => num(stats[c.id]?.uniqueSpans) },
        { label: 'Annotation sets', value: (c) => (c.annotationSets || []).map((s) => s.name).join(', ') || '—' },
        { label: 'Source', value: source },
        { label: 'Created', value: (c) => date(c.createdAt) },
      ], corpora, { cls: 'corpora', caption: `${num(data.corpora.totalCount)} corpora` }))
      : card(null, emptyState()),
    can('import') ? importForm(corpora.map((c) => c.name), signal) : null);
}

const FORMATS = 'query ImportFormats { formats { name description } tagSets { name } }';
const START_IMPORT = `mutation StartImport($input: ImportInput!, $files: [Upload!]!) { job: startImport(input: $input, files: $files) { ${JOB_FIELDS} } }`;

/**
 * importForm is the Import card: files (single files or .zip archives) into
 * a new or existing corpus, as a background job followed here; the format
 * is detected from the files unless chosen, and a table format (csv, omop)
 * takes its columns.
 */
function importForm(names, signal) {
  const files = h('input', { id: 'import-files', type: 'file', multiple: true, required: true });
  const corpus = h('input', { id: 'import-corpus', required: true, list: 'import-corpora', autocomplete: 'off', placeholder: 'new or existing', pattern: '[A-Za-z0-9._\\-]+', title: 'Letters, digits, dot, dash and underscore' });
  const corpora = h('datalist', { id: 'import-corpora' }, names.map((n) => h('option', { value: n })));
  const tagset = h('select', { id: 'import-tagset' }, h('option', { value: '' }, 'the corpus’s, or the files’'));
  const format = h('select', { id: 'import-format' }, h('option', { value: '' }, 'detected from the files'));
  const columns = h('input', { id: 'import-columns', autocomplete: 'off', placeholder: 'id=note_id,patient=person_id,text=note_text' });
  const split = h('select', { id: 'import-split' }, [['', 'the files’'], ['train', 'train'], ['dev', 'dev'], ['test', 'test']].map(([v, l]) => h('option', { value: v }, l)));
  const kind = h('select', { id: 'import-kind' }, h('option', { value: '' }, 'original (real PHI)'), h('option', { value: 'surrogate' }, 'surrogate (PHI already replaced)'));
  const status = h('div', { id: 'import-status', role: 'status' });
  const submit = h('button', { type: 'submit' }, 'Import');
  gql(FORMATS, {}, { signal }).then((d) => {
    tagset.append(...d.tagSets.map((t) => h('option', { value: t.name }, t.name)));
    format.append(...d.formats.map((f) => h('option', { value: f.name, title: f.description }, f.name)));
  }).catch(() => { /* the defaults still import */ });
  const onSubmit = async (e) => {
    e.preventDefault();
    const input = { corpus: corpus.value.trim() };
    if (tagset.value) input.tagset = tagset.value;
    if (format.value) input.format = format.value;
    if (columns.value.trim()) input.columns = columns.value.trim();
    if (split.value) input.split = split.value;
    if (kind.value) input.kind = kind.value;
    submit.disabled = true;
    status.className = '';
    status.textContent = 'Uploading…';
    try {
      const { job } = await gql(START_IMPORT, { input }, { signal, files: [...files.files] });
      const show = (j) => {
        status.replaceChildren(h('p', {}, `Import job ${jobNumber(j.id)} `, statusBadge(j.status), ' ', j.error || j.message || ''), progressBar(j),
          FINAL.has(j.status) ? h('p', {}, resultLinks(j).flatMap((l, i) => (i ? [' · ', l] : [l]))) : null);
        if (j.status === 'failed') status.className = 'error-inline';
      };
      show(job);
      watch(job.id, { signal, update: show });
    } catch (err) {
      status.className = 'error-inline';
      status.textContent = `Could not import: ${err.message}`;
    } finally {
      submit.disabled = false;
    }
  };
  return card('Import notes', h('form', { id: 'import-form', class: 'run-form', onsubmit: onSubmit },
    h('p', { class: 'muted' }, 'Single files or .zip archives: i2b2 XML, brat, CSV, OMOP NOTE, JSONL and the other formats the server reads. All or nothing: a bad file changes nothing and says which file and line.'),
    h('div', { class: 'fields' },
      field('Files', files), field('Corpus', corpus, 'a new name makes a corpus'), corpora,
      field('Tag set', tagset, 'of a new corpus; open takes any label'), field('Format', format),
      field('Columns', columns, 'csv and omop only: field=column pairs, when the header’s names differ'),
      field('Split', split), field('Kind', kind)),
    h('div', { class: 'form-actions' }, submit),
    status));
}

/** The badge of a corpus whose resynthesis check failed, or null. */
export function quarantineBadge(c) {
  if (c.checkStatus !== 'failed') return null;
  return h('span', {
    class: 'corpus-kind k-quarantined',
    title: `Its resynthesis check found ${num(c.checkFindings)} unresolved problems: hidden from annotators and researchers and not releasable until a rerun passes or a curator resolves them.`,
  }, 'quarantined');
}

// What an empty list means depends on the role: nothing exists yet, or
// nothing this account may see.
function emptyState() {
  const me = account();
  if (me?.role === 'researcher') {
    return h('div', { class: 'empty-state', 'data-role': 'researcher' },
      h('p', {}, 'No corpus for you yet.'),
      h('p', {}, 'As a researcher you see surrogate corpora only: corpora whose PHI was replaced by resynthesis, never original notes. ',
        'None exists yet; a curator makes one from an original corpus (Runs → Resynthesis, or ', h('code', {}, 'deidcorpus resynth'), '). ',
        'Releases of surrogate corpora are under ', h('a', { href: '#/releases' }, 'Releases'), '.'));
  }
  if (me?.role === 'annotator') {
    return h('div', { class: 'empty-state', 'data-role': 'annotator' },
      h('p', {}, 'No corpus is assigned to you yet.'),
      h('p', {}, 'As an annotator you see the corpora an admin assigns to you (', h('code', {}, `deidcorpus users assign ${me.name} CORPUS`), ').'));
  }
  return h('div', { class: 'empty-state' },
    h('p', {}, 'No corpora yet.'),
    can('import')
      ? h('p', {}, 'Import one with ', h('code', {}, 'deidcorpus import --corpus NAME --tagset i2b2-2014 DIR'),
        ', or start the server with ', h('code', {}, 'deidcorpus serve --demo'), ' for a synthetic demo corpus.')
      : null);
}
