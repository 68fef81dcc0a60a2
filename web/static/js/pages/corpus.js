// #/corpus/:name?set= — a corpus's PHI distribution (by category, type,
// split and note type) as charts and tables, and its patients.

import { gql, notFound } from '../api.js';
import { h, num, pct, dec, href, table, card, figures, breadcrumbs } from '../dom.js';
import { barChart } from '../charts.js';
import { categoryColor } from '../colors.js';
import { provenanceCard, provenanceList } from '../lineage.js';
import { downloadButton } from '../downloads.js';
import { jobNumber } from '../jobs.js';
import { originalOf } from '../corpus-kind.js';
import { quarantineBadge } from './corpora.js';
import { can } from '../roles.js';

const CORPUS = `query Corpus($name: String!) {
  corpusByName(name: $name) {
    id name kind tagset checkStatus checkFindings description provenance createdAt
    annotationSets { id name kind description }
  }
}`;

const STATS = `query CorpusStats($id: ID!, $set: String!) {
  cat: corpusStatistics(corpus: $id, set: $set, by: [CATEGORY]) {
    documents patients characters tokens spans uniqueSpans documentsWithPHI phiPerDocument shareOfDocumentsWithPHI
    groups { category total unique }
  }
  type: corpusStatistics(corpus: $id, set: $set, by: [CATEGORY, TYPE]) { groups { category type total unique } }
  split: corpusStatistics(corpus: $id, set: $set, by: [SPLIT]) { groups { split total unique } }
  note: corpusStatistics(corpus: $id, set: $set, by: [NOTE_TYPE]) { groups { noteType total unique } }
  cross: corpusStatistics(corpus: $id, set: $set, by: [CATEGORY, TYPE, SPLIT]) { groups { category type split total unique } }
  train: documents(where: {corpusID: $id, split: train}) { totalCount }
  dev: documents(where: {corpusID: $id, split: dev}) { totalCount }
  test: documents(where: {corpusID: $id, split: test}) { totalCount }
  unassigned: documents(where: {corpusID: $id, split: unassigned}) { totalCount }
}`;

const PATIENTS = `query Patients($id: ID!, $after: Cursor) {
  patients(first: 100, after: $after, where: {corpusID: $id}, orderBy: {field: EXTERNAL_ID}) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id externalID documents { totalCount } } }
  }
}`;

const SPLITS = ['train', 'dev', 'test', 'unassigned'];
const noteLabel = (t) => t || '(no note type)';

export async function render({ params, query, signal, title }) {
  const name = params.name;
  title(name);
  const { corpusByName: corpus } = await gql(CORPUS, { name }, { signal });
  if (!corpus) throw notFound(`There is no corpus named “${name}”.`);
  const sets = corpus.annotationSets || [];
  const set = query.set || (sets.some((s) => s.name === 'gold') ? 'gold' : sets[0]?.name);

  const [stats, patients, lineage] = await Promise.all([
    set ? gql(STATS, { id: corpus.id, set }, { signal }) : null,
    gql(PATIENTS, { id: corpus.id }, { signal }),
    provenanceCard(corpus.id, { signal }),
  ]);

  const setPicker = sets.length > 1
    ? h('label', { class: 'inline' }, 'Annotation set ',
      h('select', {
        id: 'set-picker',
        onchange: (e) => { location.hash = href(['corpus', name], { set: e.target.value }); },
      }, sets.map((s) => h('option', { value: s.name, selected: s.name === set }, `${s.name} (${s.kind})`))))
    : null;

  return h('div', { class: 'page' },
    breadcrumbs([['Corpora', '#/'], [name]]),
    h('div', { class: 'title-row' },
      h('h1', {}, name, h('span', { class: 'tag' }, corpus.tagset), h('span', { class: `tag corpus-kind k-${corpus.kind}` }, corpus.kind), quarantineBadge(corpus)),
      h('div', { class: 'actions' }, setPicker,
        can('annotate') ? h('a', { class: 'button annotate-link', href: href(['corpus', name, 'annotate']) }, 'Annotate') : null,
        can('adjudicate') ? h('a', { class: 'button adjudicate-link', href: href(['corpus', name, 'adjudicate']) }, 'Adjudicate') : null,
        set ? downloadButton(`/download/corpora/${encodeURIComponent(name)}?set=${encodeURIComponent(set)}&format=i2b2`, 'Download (i2b2 zip)', { class: 'corpus-download' }) : null)),
    corpus.description ? h('p', { class: 'lead' }, corpus.description) : null,
    corpus.checkStatus === 'failed' ? h('p', { class: 'error-inline quarantine' },
      `Quarantined: a resynthesis check of this corpus found ${num(corpus.checkFindings)} unresolved problems (see its runs' check reports). `,
      'Annotators and researchers do not see it and it cannot be released until a rerun into it passes or a curator resolves the findings (deidcorpus resynth resolve).') : null,
    provenance(corpus),
    originalOf(corpus) ? checkCard(corpus.provenance) : null,
    stats ? statistics(name, set, stats) : card(null, h('p', { class: 'empty' }, 'This corpus has no annotation sets, so no PHI statistics.')),
    patientsCard(name, corpus.id, set, patients.patients, signal),
    lineage,
  );
}

function provenance(corpus) {
  const p = corpus.provenance;
  if (!p || !Object.keys(p).length) return null;
  const surrogate = Boolean(originalOf(corpus));
  // The check and the runs have cards of their own; ids and the job are
  // the Provenance card's.
  const hidden = new Set(surrogate ? ['check', 'runs', 'fromID', 'job'] : ['fromID', 'job']);
  return h('section', { class: 'provenance' }, h('h2', { class: 'visually-hidden' }, 'How this corpus was made'),
    provenanceList(p, {
      skip: (k) => hidden.has(k),
      link: (k, v) => (surrogate && k === 'from' && typeof v === 'string' ? h('a', { href: href(['corpus', v]) }, v) : null),
    }));
}

// The counts of a check that add up over runs (each run checks the notes it
// wrote): the whole corpus's are their sums.
const SUMMED = ['documents', 'spans', 'replaced', 'leaks', 'identifiers', 'misaligned', 'inconsistent', 'intervalErrors',
  'datesChecked', 'equalToOriginal', 'metadata', 'unannotated', 'review'];

// wholeCheck sums the checks of every run into the corpus's: ok when each
// passed; a count no run recorded stays undefined. The latest run's name
// patterns stand for the corpus's.
function wholeCheck(runs) {
  const checks = runs.map((r) => r.check).filter(Boolean);
  if (!checks.length) return null;
  const c = { ok: checks.every((x) => x.ok), namePatterns: checks.at(-1).namePatterns };
  for (const k of SUMMED) {
    if (checks.some((x) => typeof x[k] === 'number')) c[k] = checks.reduce((a, x) => a + (x[k] || 0), 0);
  }
  return c;
}

// A surrogate corpus's resynthesis check as a whole: the sum of its runs'
// (the first run's record is the provenance itself, each later run's is in
// provenance.runs), PHI-free counts and the name-pattern table, original
// beside surrogate; then each run's.
function checkCard(p) {
  const runs = [p, ...(p.runs || [])];
  const run = runs.at(-1);
  const c = wholeCheck(runs);
  if (!c) return card('Resynthesis check', h('p', { class: 'empty' }, 'This surrogate corpus records no check summary.'));
  const bad = (n) => (n ? h('span', { class: 'bad' }, num(n)) : '0');
  const patterns = c.namePatterns || [];
  return card('Resynthesis check',
    h('p', { class: c.ok ? 'check-ok' : 'check-failed', 'data-ok': String(Boolean(c.ok)) },
      c.ok ? '✓ The check passed: ' : '✗ The check failed: ',
      // A researcher reads the public provenance: no source, seed or
      // count of the source's values (release.PublicProvenance).
      c.spans === undefined ? `PHI in ${num(c.documents)} documents replaced by resynthesis` : `${num(c.replaced)} of ${num(c.spans)} spans in ${num(c.documents)} documents replaced`,
      ...(p.from ? [' from ', h('a', { href: href(['corpus', p.from]) }, p.from)] : []),
      runs.length > 1 ? ` in ${runs.length} runs (below)` : (p.from ? ` by job ${run.job ? jobNumber(run.job) : '?'} (seed ${run.seed ?? '?'})` : ''), '.'),
    h('div', { class: 'grid' },
      table([
        { label: 'Check', value: (r) => r[0] },
        { label: 'Count', num: true, value: (r) => r[1] },
        { label: '', value: (r) => h('span', { class: 'muted' }, r[2]) },
      ], [
        ['Leaks', bad(c.leaks), 'an original value still in a surrogate note'],
        ['Source ids', c.identifiers === undefined ? '—' : bad(c.identifiers), 'a patient or note id of the source written in a note (not searched before 27 November 2026)'],
        ['Misaligned', bad(c.misaligned), 'spans whose offsets do not cover their surrogate text'],
        ['Inconsistent', bad(c.inconsistent), 'one original value given different surrogates'],
        ['Interval errors', bad(c.intervalErrors), `date intervals not preserved (${num(c.datesChecked)} dates checked)`],
        ['Equal to original', num(c.equalToOriginal), 'surrogates that happen to equal the original'],
        ['Note fields', c.metadata === undefined ? '—' : bad(c.metadata), 'a creation date, note type or span comment that gives an original away (not checked before 6 December 2026)'],
        ['Unannotated', num(c.unannotated), 'possible PHI outside the gold spans'],
        ...(p.unannotatedDocuments || p.unannotatedFinds ? [['Unannotated, whole corpus', bad(p.unannotatedFinds ?? Object.values(p.unannotatedDocuments).reduce((a, n) => a + n, 0)),
          'what the notes hold now, every run counted; sharing needs a curator’s reason while any remain']] : []),
        ['For review', num(c.review), 'replacements flagged for a human'],
      ], { cls: 'compact check', caption: 'Counts only: the full report names original values and is an artifact of the job.' }),
      patterns.length ? table([
        { label: 'Name pattern', value: (r) => h('code', {}, r.pattern) },
        { label: 'Tokens', num: true, value: (r) => num(r.tokens) },
        { label: 'Original', num: true, value: (r) => num(r.original) },
        { label: 'Surrogate', num: true, value: (r) => num(r.surrogate) },
        { label: 'Δ', num: true, value: (r) => (r.surrogate - r.original ? h('span', { class: 'bad' }, `${r.surrogate - r.original > 0 ? '+' : ''}${r.surrogate - r.original}`) : '0') },
      ], patterns, { cls: 'compact name-patterns', caption: 'Shapes of names (A: a word; punctuation kept), original vs surrogate' }) : null),
    runs.length > 1 ? runsTable(runs) : null);
}

// runsTable lists the runs into a surrogate corpus, oldest first: each
// checked the notes it wrote.
function runsTable(runs) {
  const findings = (c) => ['leaks', 'identifiers', 'misaligned', 'inconsistent', 'intervalErrors', 'metadata'].reduce((a, k) => a + (c?.[k] || 0), 0);
  return table([
    { label: 'Run', value: (r) => (r.job ? `job ${jobNumber(r.job)}` : '—') },
    { label: 'Seed', num: true, value: (r) => (r.seed ?? '—') },
    { label: 'Documents', num: true, value: (r) => num(r.check?.documents) },
    { label: 'Spans replaced', num: true, value: (r) => (r.check?.spans === undefined ? '—' : `${num(r.check.replaced)} of ${num(r.check.spans)}`) },
    { label: 'Findings', num: true, value: (r) => num(findings(r.check)) },
    { label: 'Check', value: (r) => (r.check ? (r.check.ok ? 'passed' : h('span', { class: 'bad' }, 'failed')) : '—') },
  ], runs, { cls: 'compact runs', caption: 'Runs into this corpus, oldest first: each checked the notes it wrote.' });
}

function statistics(name, set, st) {
  const c = st.cat;
  const docsBySplit = Object.fromEntries(SPLITS.map((s) => [s, st[s].totalCount]));
  const cats = [...c.groups].sort((a, b) => b.total - a.total);
  const catOrder = new Map(cats.map((g, i) => [g.category, i]));
  const types = [...st.type.groups].sort((a, b) => (catOrder.get(a.category) ?? 99) - (catOrder.get(b.category) ?? 99) || b.total - a.total);
  const splits = [...st.split.groups].sort((a, b) => SPLITS.indexOf(a.split) - SPLITS.indexOf(b.split));
  const notes = [...st.note.groups].sort((a, b) => b.total - a.total);
  const share = (g) => (c.spans ? g.total / c.spans : 0);

  const catChart = barChart({
    id: 'category', title: `PHI by category (${set})`,
    data: cats.map((g) => ({ label: g.category, value: g.total, unique: g.unique, color: categoryColor(g.category) })),
  });
  const typeChart = barChart({
    id: 'type', title: `PHI by type (${set})`,
    data: types.map((g) => ({ label: g.type, value: g.total, unique: g.unique, color: categoryColor(g.category), group: g.category })),
  });
  const splitChart = barChart({
    id: 'split', title: `PHI by split (${set})`,
    data: splits.map((g) => ({ label: g.split, value: g.total, unique: g.unique, color: '#1f3a5f' })),
  });
  const noteChart = barChart({
    id: 'note-type', title: `PHI by note type (${set})`,
    data: notes.map((g) => ({ label: noteLabel(g.noteType), value: g.total, unique: g.unique, color: '#5c6f82' })),
  });
  const groupCols = (label, key) => [
    { label, value: (g) => key(g) },
    { label: 'Total', num: true, value: (g) => num(g.total) },
    { label: 'Unique', num: true, value: (g) => num(g.unique) },
    { label: 'Share', num: true, value: (g) => pct(share(g)) },
  ];

  return h('div', { class: 'stats' },
    figures([
      ['Patients', num(c.patients)],
      ['Documents', num(c.documents)],
      ['Tokens', num(c.tokens), 'whitespace-separated'],
      ['PHI spans', num(c.spans)],
      ['Unique PHI', num(c.uniqueSpans), 'distinct span texts'],
      ['PHI per document', dec(c.phiPerDocument)],
      ['Documents with PHI', `${num(c.documentsWithPHI)} (${pct(c.shareOfDocumentsWithPHI)})`],
    ]),
    h('div', { class: 'grid' },
      card('By category', catChart, table(groupCols('Category', (g) => swatch(g.category, g.category)), cats, { cls: 'compact', caption: 'PHI by category' })),
      card('By split', splitChart,
        table([
          { label: 'Split', value: (g) => g.split },
          { label: 'Documents', num: true, value: (g) => num(docsBySplit[g.split]) },
          { label: 'PHI', num: true, value: (g) => num(g.total) },
          { label: 'Unique', num: true, value: (g) => num(g.unique) },
          { label: 'PHI / doc', num: true, value: (g) => (docsBySplit[g.split] ? dec(g.total / docsBySplit[g.split]) : '—') },
        ], splits, { cls: 'compact', caption: 'PHI by split' }),
        noteChart,
        table(groupCols('Note type', (g) => noteLabel(g.noteType)), notes, { cls: 'compact', caption: 'PHI by note type' })),
    ),
    h('div', { class: 'grid' },
      card('By type', typeChart),
      card('By type and split', crossTable(st.cross.groups, splits.map((g) => g.split), catOrder))),
  );
}

function swatch(cat, label) {
  return h('span', { class: 'swatch-label' }, h('span', { class: 'swatch', vars: { '--c': categoryColor(cat) }, 'aria-hidden': 'true' }), label);
}

// Stubbs & Uzuner Table 3's layout: one row per type, a column per split.
function crossTable(groups, splits, catOrder) {
  const rows = new Map();
  for (const g of groups) {
    const key = `${g.category}\u0000${g.type}`;
    if (!rows.has(key)) rows.set(key, { category: g.category, type: g.type, total: 0, unique: 0, by: {} });
    const r = rows.get(key);
    r.by[g.split] = g;
    r.total += g.total;
  }
  const list = [...rows.values()].sort((a, b) => (catOrder.get(a.category) ?? 99) - (catOrder.get(b.category) ?? 99) || b.total - a.total);
  return table([
    { label: 'Category', value: (r) => swatch(r.category, r.category) },
    { label: 'Type', value: (r) => r.type, rowHeader: false },
    ...splits.map((s) => ({ label: s, num: true, value: (r) => (r.by[s] ? num(r.by[s].total) : '0') })),
    { label: 'Total', num: true, value: (r) => num(r.total) },
  ], list, { cls: 'compact cross', caption: 'PHI spans by type and split (Stubbs & Uzuner, Table 3)' });
}

function patientsCard(name, corpusId, set, conn, signal) {
  const rowsOf = (c) => c.edges.map((e) => e.node);
  const link = (p) => h('a', { href: href(['corpus', name, 'patient', p.externalID], { set }) }, p.externalID);
  const list = h('ul', { class: 'patients' });
  const addRows = (c) => list.append(...rowsOf(c).map((p) =>
    h('li', {}, link(p), h('span', { class: 'muted' }, ` ${p.documents.totalCount} note${p.documents.totalCount === 1 ? '' : 's'}`))));
  addRows(conn);
  let page = conn.pageInfo;
  const more = h('button', {
    type: 'button', class: 'more', hidden: !page.hasNextPage,
    onclick: async () => {
      more.disabled = true;
      try {
        const { patients } = await gql(PATIENTS, { id: corpusId, after: page.endCursor }, { signal });
        addRows(patients);
        page = patients.pageInfo;
        more.hidden = !page.hasNextPage;
      } catch (e) {
        more.replaceWith(h('p', { class: 'error', role: 'alert' }, `Could not load more patients: ${e.message}`));
      } finally {
        more.disabled = false;
      }
    },
  }, 'Show more patients');

  const docInput = h('input', { id: 'doc-id', name: 'doc', placeholder: 'e.g. 100-01', required: true, autocomplete: 'off' });
  const open = h('form', {
    class: 'inline-form', onsubmit: (e) => {
      e.preventDefault();
      location.hash = href(['corpus', name, 'doc', docInput.value.trim()], { set });
    },
  }, h('label', { for: 'doc-id' }, 'Open document '), docInput, h('button', { type: 'submit' }, 'Open'));

  return card(`Patients (${num(conn.totalCount)})`, open, list, more);
}
