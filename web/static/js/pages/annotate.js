// #/corpus/:name/annotate?set=&doc= — annotating by hand, keyboard first.
// Without a set: the sets this account may edit (an annotator's own, or any
// for curators) and their progress. With one: a note, its spans in the set
// coloured by type and labelled as brat shows them; select text and press a
// type's key (mnemonic, and the user's own per tag set) to add a span,
// click a span (or j/k) to pick it, a type's key to change it, x to remove
// it, [ ] { } to move its edges; n/p the next and previous note, d done, u
// undo. The screen changes at once; edits go to the server one after
// another, each against the version the last one left. A stale edit
// (someone else wrote the note since) is refused by the server: the note is
// reloaded and the same edit made again on top, and the view says so.

import { gql, ApiError, notFound } from '../api.js';
import { h, href, card, breadcrumbs, table, num, field } from '../dom.js';
import { categoryColor, typeColors } from '../colors.js';
import { codePointIndex } from '../overlay.js';
import { note, drawNote, selectionIn, trim, typeKeys, validTypeKey, typing, timeKey, keysCard } from '../notemarks.js';
import { account } from '../session.js';
import { seesAllCorpora, can } from '../roles.js';

const SETS = `query AnnotationSets($name: String!) {
  corpusByName(name: $name) { id name tagset annotationSets { id name kind annotator progress { documentID status version } } }
  tagSets { name categories { name types } }
}`;
const DOC = `query AnnotatedDocument($doc: ID!, $set: ID!, $setName: String!) {
  node(id: $doc) { ... on Document { id externalID noteType text
    annotationState(set: $set) { status version }
    annotations(set: $setName) { id start end category type } } }
}`;
const DOCS = `query CorpusDocuments($name: String!) {
  documents(first: 1000, where: {hasCorpusWith: {name: $name}}, orderBy: {field: RECORD_ORDER}) { edges { node { id } } }
}`;
const EDIT = 'state { status version } span { id start end category type }';
const ADD = `mutation AddSpan($in: AddSpanInput!) { addSpan(input: $in) { ${EDIT} } }`;
const CHANGE = `mutation ChangeSpan($in: ChangeSpanInput!) { changeSpan(input: $in) { ${EDIT} } }`;
const REMOVE = `mutation RemoveSpan($span: ID!, $v: Int!) { removeSpan(span: $span, version: $v) { ${EDIT} } }`;
const STATUS = `mutation SetStatus($set: ID!, $doc: ID!, $s: AnnotationStatus!, $v: Int!) {
  setDocumentStatus(set: $set, document: $doc, status: $s, version: $v) { status version }
}`;
const ASSIGN = `mutation Assign($input: AssignInput!) { assignDocuments(input: $input) { id name annotator progress { documentID } } }`;
const UNDO = `mutation Undo($set: ID!, $doc: ID!, $v: Int!) { undoEdit(set: $set, document: $doc, version: $v) { ${EDIT} } }`;

/** editable lists the sets the signed-in account may edit. */
function editable(sets) {
  const me = account();
  return sets.filter((s) => seesAllCorpora() || s.annotator === me?.name);
}

const STATUS_LABEL = { todo: 'to do', in_progress: 'in progress', done: 'done' };

export async function render({ params, query, signal, title }) {
  const { name } = params;
  const data = await gql(SETS, { name }, { signal });
  const corpus = data.corpusByName;
  if (!corpus) throw notFound(`There is no corpus named “${name}”.`);
  const sets = editable(corpus.annotationSets || []);
  if (!query.set) {
    title(`Annotate · ${name}`);
    return setsView(name, sets, corpus.annotationSets || []);
  }
  const set = sets.find((s) => s.name === query.set);
  if (!set) throw notFound(`You may not annotate a set “${query.set}” of corpus “${name}”${seesAllCorpora() ? '' : ' (an annotator edits only the sets assigned to it)'}.`);
  let docs = set.progress.map((p) => p.documentID);
  if (!docs.length) docs = (await gql(DOCS, { name }, { signal })).documents.edges.map((e) => e.node.id);
  if (!docs.length) throw notFound(`Corpus “${name}” has no documents.`);
  const docID = docs.includes(query.doc) ? query.doc : (set.progress.find((p) => p.status !== 'done')?.documentID || docs[0]);
  const tagset = data.tagSets.find((t) => t.name === corpus.tagset);
  const doc = (await gql(DOC, { doc: docID, set: set.id, setName: set.name }, { signal })).node;
  if (!doc) throw notFound(`Document ${docID} is not in corpus “${name}”.`);
  title(`Annotate ${doc.externalID} · ${set.name}`);
  return new Annotator({ name, set, docs, tagset, doc, signal }).view;
}

function setsView(name, sets, corpusSets) {
  const count = (s, st) => s.progress.filter((p) => p.status === st).length;
  // A set nobody was assigned (gold, a tagging's) counts every note of the
  // corpus, not the none of its assignments.
  const assigned = (s) => s.progress.length > 0;
  return h('div', { class: 'page annotate-sets' },
    breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name])], ['Annotate']]),
    h('h1', {}, `Annotate ${name}`),
    card('Your sets', table([
      { label: 'Set', value: (s) => h('a', { href: href(['corpus', name, 'annotate'], { set: s.name }) }, s.name) },
      { label: 'Kind', value: (s) => s.kind },
      { label: 'Annotator', value: (s) => s.annotator || '—' },
      { label: 'Notes', num: true, value: (s) => (assigned(s) ? num(s.progress.length) : 'every note') },
      { label: 'Done', num: true, value: (s) => (assigned(s) ? num(count(s, 'done')) : '—') },
      { label: 'In progress', num: true, value: (s) => (assigned(s) ? num(count(s, 'in_progress')) : '—') },
    ], sets, { empty: seesAllCorpora() ? 'This corpus has no annotation sets.' : 'No set of this corpus is assigned to you: a curator assigns documents (Assign, on this page, or deidcorpus annotate assign).' })),
    sets.length ? queueCard(name, sets) : null,
    can('assign') ? assignForm(name, corpusSets) : null);
}

const MODELS = 'query QueueModels { models(first: 200) { edges { node { name kind } } } }';
const QUEUE = `query Queue($corpus: String!, $set: String!, $model: String!) {
  annotationQueue(corpus: $corpus, set: $set, model: $model, first: 20) { document { id externalID noteType } status tokens uncertainty }
}`;

/**
 * queueCard orders a set's open notes by a model's uncertainty (the sum of
 * its tokens' label entropy): the notes worth annotating first, each a link
 * into the set.
 */
function queueCard(name, sets) {
  const set = h('select', { id: 'queue-set' }, sets.map((s) => h('option', { value: s.name }, s.name)));
  const model = h('select', { id: 'queue-model', required: true });
  const out = h('div', { id: 'queue-out', 'aria-live': 'polite' });
  gql(MODELS).then((d) => {
    const built = d.models.edges.map((e) => e.node).filter((m) => m.kind !== 'external');
    model.replaceChildren(...built.map((m) => h('option', { value: m.name }, m.name)));
    if (!built.length) out.replaceChildren(h('p', { class: 'muted' }, 'No model to rank by yet: train one on the Runs page.'));
  }).catch(() => {});
  const submit = async (e) => {
    e.preventDefault();
    out.replaceChildren(h('p', { class: 'muted' }, 'Ranking…'));
    try {
      const { annotationQueue: q } = await gql(QUEUE, { corpus: name, set: set.value, model: model.value });
      out.replaceChildren(table([
        { label: 'Note', value: (x) => h('a', { href: href(['corpus', name, 'annotate'], { set: set.value, doc: x.document.id }) }, x.document.externalID) },
        { label: 'Type', value: (x) => x.document.noteType || '—' },
        { label: 'Status', value: (x) => STATUS_LABEL[x.status] || x.status },
        { label: 'Tokens', num: true, value: (x) => num(x.tokens) },
        { label: 'Uncertainty (nats)', num: true, value: (x) => x.uncertainty.toFixed(1) },
      ], q, { cls: 'compact queue', empty: 'Every note of the set is done.' }));
    } catch (err) {
      out.replaceChildren(h('p', { class: 'error-inline', role: 'alert' }, `Could not rank: ${err.message}`));
    }
  };
  return card('What to annotate next', h('form', { id: 'queue-form', class: 'controls', onsubmit: submit },
    h('label', {}, 'Set ', set), h('label', {}, 'ranked by the uncertainty of model ', model), h('button', { type: 'submit' }, 'Rank')), out);
}

/**
 * assignForm is the curator's Assign card: a batch of the corpus's notes
 * (by split, note type or patients) to annotators, each into a set of its
 * own named BATCH:ACCOUNT, optionally starting from a tagging run's spans.
 */
function assignForm(name, corpusSets) {
  const batch = h('input', { id: 'assign-set', required: true, placeholder: 'e.g. batch1', autocomplete: 'off' });
  const annotators = h('input', { id: 'assign-annotators', required: true, placeholder: 'e.g. ann, bob', autocomplete: 'off' });
  const split = h('select', { id: 'assign-split' }, [['', 'any'], ['train', 'train'], ['dev', 'dev'], ['test', 'test']].map(([v, l]) => h('option', { value: v }, l)));
  const noteType = h('input', { id: 'assign-note-type', placeholder: 'any', autocomplete: 'off' });
  const patients = h('input', { id: 'assign-patients', placeholder: 'any (ids, comma separated)', autocomplete: 'off' });
  const pre = h('select', { id: 'assign-preannotate' }, [h('option', { value: '' }, 'none: empty sets'),
    ...corpusSets.filter((s) => s.kind !== 'annotator').map((s) => h('option', { value: s.name }, `${s.name} (${s.kind})`))]);
  const open = h('input', { id: 'assign-open', type: 'checkbox' });
  const status = h('p', { id: 'assign-status', role: 'status' });
  const list = (v) => v.split(',').map((x) => x.trim()).filter(Boolean);
  const submit = async (e) => {
    e.preventDefault();
    status.className = '';
    status.textContent = 'Assigning…';
    const input = { corpus: name, set: batch.value.trim(), annotators: list(annotators.value), open: open.checked };
    if (split.value) input.split = split.value;
    if (noteType.value.trim()) input.noteType = noteType.value.trim();
    if (list(patients.value).length) input.patients = list(patients.value);
    if (pre.value) input.preannotateFrom = pre.value;
    try {
      const { assignDocuments: made } = await gql(ASSIGN, { input });
      status.className = 'note-ok';
      status.replaceChildren(`Assigned ${num(made[0]?.progress.length ?? 0)} notes to each of ${made.map((s) => s.annotator).join(', ')}: `,
        ...made.flatMap((s, i) => [i ? ', ' : '', h('a', { href: href(['corpus', name, 'annotate'], { set: s.name }) }, s.name)]), '.');
    } catch (err) {
      status.className = 'error-inline';
      status.textContent = `Could not assign: ${err.message}`;
    }
  };
  return card('Assign notes to annotators', h('form', { id: 'assign-form', class: 'run-form', onsubmit: submit },
    h('p', { class: 'muted' }, 'Each annotator gets a set of its own, BATCH:ACCOUNT, blind to the others unless open; the notes not yet in the batch, chosen by split, note type or patients.'),
    h('div', { class: 'fields' },
      field('Batch', batch), field('Annotators', annotators, 'accounts with the annotator role, assigned this corpus'),
      field('Split', split), field('Note type', noteType), field('Patients', patients),
      field('Start from the spans of', pre, 'a tagging run’s set: pre-annotation')),
    h('p', {}, h('label', { class: 'inline' }, open, ' open: the annotators also read the corpus’s other sets')),
    h('p', {}, h('button', { type: 'submit' }, 'Assign')),
    status));
}

let tmpID = 0;

/** Annotator is one note's annotation view: its state, its drawing and its keys. */
class Annotator {
  constructor({ name, set, docs, tagset, doc, signal }) {
    Object.assign(this, { name, set, docs, signal });
    this.tagset = tagset;
    this.colors = tagset ? typeColors(tagset.categories) : new Map();
    this.setKeys(tagset ? typeKeys(tagset.categories, chosenKeys(tagset.name)) : []);
    this.queue = Promise.resolve();
    this.pending = 0;
    this.load(doc);
    this.note = note();
    this.noteWrap = h('div', { class: 'note-wrap annotate-note' }, this.note);
    this.noteWrap.addEventListener('mouseup', () => this.pickText());
    this.noteWrap.addEventListener('click', (e) => this.clickMark(e));
    this.statusLine = h('p', { class: 'annotate-status', id: 'annotate-status', role: 'status' });
    this.message = h('div', { id: 'annotate-message', 'aria-live': 'polite' });
    this.selectedCard = h('div', { id: 'annotate-selected' });
    this.countLine = h('p', { class: 'muted', id: 'annotate-counts' });
    this.spanList = h('ol', { class: 'span-list', id: 'span-list' });
    this.counts = h('div', {}, this.countLine, this.spanList);
    const at = docs.indexOf(doc.id);
    const go = (i) => (docs[i] ? h('a', { class: 'button', href: this.docLink(docs[i]), rel: i < at ? 'prev' : 'next' }, i < at ? '← previous (p)' : 'next (n) →') : null);
    this.view = h('div', { class: 'page annotate-page', 'data-set': set.name, 'data-doc': doc.id },
      breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name])], ['Annotate', href(['corpus', name, 'annotate'])], [set.name]]),
      h('div', { class: 'title-row' },
        h('h1', {}, doc.externalID, h('span', { class: 'tag' }, set.name), doc.noteType ? h('span', { class: 'tag' }, doc.noteType) : null),
        h('nav', { class: 'actions', 'aria-label': 'Notes of this set' }, `Note ${at + 1} of ${docs.length} `, go(at - 1), go(at + 1))),
      this.statusLine,
      this.message,
      h('div', { class: 'doc-layout' },
        this.noteWrap,
        h('aside', { class: 'doc-side' }, card('Selected', this.selectedCard), this.typesCard = this.palette(), card('Spans', this.counts), keysCard(ANNOTATE_KEYS))));
    this.draw();
    document.addEventListener('keydown', (e) => this.key(e), { signal });
  }

  docLink(id) {
    return href(['corpus', this.name, 'annotate'], { set: this.set.name, doc: id });
  }

  load(doc) {
    this.doc = doc;
    this.idx = codePointIndex(doc.text);
    this.chars = [...doc.text];
    this.spans = doc.annotations.map((s) => ({ ...s }));
    this.version = doc.annotationState.version;
    this.status = doc.annotationState.status;
    this.selected = this.spans.find((s) => s.id === this.selected?.id) || null;
  }

  setKeys(keys) {
    this.keys = keys;
    this.byKey = new Map(keys.filter((k) => k.key).map((k) => [k.key, k]));
  }

  colorOf(s) {
    return this.colors.get(s.type) || categoryColor(s.category);
  }

  palette() {
    if (!this.keys.length) return card('Types', h('p', { class: 'muted' }, 'This corpus’s tag set is open: it names no types to offer.'));
    return card('Types', h('ul', { class: 'type-keys', id: 'type-keys' }, this.keys.map((k) => h('li', {},
      h('button', { type: 'button', class: 'type-key', 'data-type': k.type, title: `${k.category} / ${k.type}`, vars: { '--c': this.colorOf(k) }, onclick: () => this.applyType(k) },
        k.key ? h('kbd', {}, k.key) : null, ' ', h('span', { class: 'type-name' }, k.type))))),
    this.keysForm());
  }

  /** keysForm lets the user choose the types' keys, kept in this browser per tag set. */
  keysForm() {
    const inputs = this.keys.map((k) => h('input', { type: 'text', maxlength: 2, size: 2, value: k.key, 'data-type': k.type, 'aria-label': `Key of ${k.type}`, autocomplete: 'off' }));
    const error = h('p', { class: 'error-inline', role: 'alert', hidden: true });
    const save = (e) => {
      e.preventDefault();
      const chosen = {};
      const seen = new Map();
      for (const input of inputs) {
        const key = input.value.trim();
        if (!key) continue;
        if (!validTypeKey(key)) return showError(`${input.dataset.type}: “${key}” cannot be a type’s key (one character, not one of the commands j k n p u x d a [ ] { }).`);
        if (seen.has(key)) return showError(`“${key}” is the key of both ${seen.get(key)} and ${input.dataset.type}.`);
        seen.set(key, input.dataset.type);
        chosen[input.dataset.type] = key;
      }
      saveKeys(this.tagset.name, chosen);
      this.retype(typeKeys(this.tagset.categories, chosen));
    };
    const showError = (msg) => { error.textContent = msg; error.hidden = false; };
    const reset = () => {
      saveKeys(this.tagset.name, {});
      this.retype(typeKeys(this.tagset.categories));
    };
    return h('details', { class: 'keys-form' }, h('summary', {}, 'Change keys'),
      h('form', { id: 'type-keys-form', onsubmit: save },
        h('p', { class: 'muted' }, `Keys of the ${this.tagset.name} tag set, kept in this browser. A type left empty gets the first free letter of its name.`),
        h('ul', { class: 'key-inputs' }, inputs.map((input) => h('li', {}, h('label', {}, input, ' ', input.dataset.type)))),
        error,
        h('p', {}, h('button', { type: 'submit' }, 'Save keys'), ' ', h('button', { type: 'button', onclick: reset }, 'Back to the default'))));
  }

  retype(keys) {
    this.setKeys(keys);
    const card = this.palette();
    this.typesCard.replaceWith(card);
    this.typesCard = card;
  }

  // ---- drawing

  draw() {
    const sel = this.selected;
    this.reloaded = false;
    drawNote(this.note, this.doc.text, this.idx, this.spans, (s, first) => ({
      class: s === sel ? 'phi selected' : 'phi', 'data-id': s.id, 'data-type': s.type, 'data-tip': `${s.category} / ${s.type}`,
      id: first ? `span-${s.id}` : undefined, 'data-label': first ? s.type : undefined, vars: { '--c': this.colorOf(s) },
    }));
    this.drawSpans();
    // A line kept as it was may still show a pick drawSelection made since.
    this.drawSelection();
  }

  /** drawSelection shows a newly picked span without redrawing the note. */
  drawSelection() {
    for (const m of this.noteWrap.querySelectorAll('mark.selected')) m.classList.remove('selected');
    if (this.selected) for (const m of this.noteWrap.querySelectorAll(`mark[data-id="${CSS.escape(String(this.selected.id))}"]`)) m.classList.add('selected');
    this.drawState();
  }

  /** drawState draws everything but the note. */
  drawState() {
    const sel = this.selected;
    this.view.dataset.version = String(this.version);
    this.statusLine.replaceChildren(
      h('span', { class: `status s-${this.status}`, id: 'doc-status' }, STATUS_LABEL[this.status]), ' ',
      h('span', { id: 'doc-version' }, `version ${this.version}`), ' · ',
      h('span', { id: 'span-count' }, `${this.spans.length} span${this.spans.length === 1 ? '' : 's'}`),
      this.pending ? h('span', { class: 'muted saving' }, ' · saving…') : h('span', { class: 'muted saved' }, ' · saved'));
    this.selectedCard.replaceChildren(...(sel
      ? [h('p', {}, h('strong', {}, sel.type), ` ${sel.category} “${this.chars.slice(sel.start, sel.end).join('')}” [${sel.start}–${sel.end}]`),
        h('p', { class: 'muted' }, 'A type’s key or button changes its type. ',
          h('button', { type: 'button', id: 'remove-span', onclick: () => this.remove(sel) }, h('kbd', {}, 'x'), ' remove'))]
      : [h('p', { class: 'muted' }, 'Nothing: select text and press a type’s key, or click a span.')]));
    const byType = new Map();
    for (const s of this.spans) byType.set(s.type, (byType.get(s.type) || 0) + 1);
    this.countLine.replaceChildren([...byType].sort().map(([t, n]) => `${t} ${n}`).join(' · ') || 'None yet.');
    for (const li of this.spanList.querySelectorAll('li.selected')) li.classList.remove('selected');
    if (sel) this.spanList.querySelector(`button[data-id="${CSS.escape(String(sel.id))}"]`)?.parentElement.classList.add('selected');
  }

  /** drawSpans lists the spans in text order, each a button that picks it (drawn with the note, not on every pick). */
  drawSpans() {
    const order = [...this.spans].sort((a, b) => a.start - b.start || a.end - b.end);
    this.spanList.replaceChildren(...order.map((s) => h('li', {},
      h('button', { type: 'button', class: 'span-pick', 'data-id': s.id, vars: { '--c': this.colorOf(s) }, onclick: () => this.pick(s) },
        h('span', { class: 'type-name' }, s.type), ' ', h('span', { class: 'span-text' }, this.chars.slice(s.start, s.end).join(''))))));
  }

  scrollToSelected() {
    const el = this.selected && document.getElementById(`span-${this.selected.id}`);
    if (el) el.scrollIntoView({ block: 'nearest' });
  }

  say(text, cls = 'note-ok') {
    this.message.replaceChildren(text ? h('p', { class: cls, role: cls === 'note-ok' ? 'status' : 'alert' }, text) : '');
  }

  // ---- input

  pickText() {
    const r = selectionIn(this.noteWrap);
    this.textSel = r ? trim(r, this.chars) : null;
  }

  clickMark(e) {
    if (this.textSel) return; // a drag ending on a mark selects text, not the span
    const m = e.target.closest('mark[data-id]');
    if (!m) return;
    this.pick(this.spans.find((s) => String(s.id) === m.dataset.id) || null);
  }

  pick(span) {
    this.selected = span;
    this.drawSelection();
  }

  key(e) {
    if (typing(e) || e.defaultPrevented) return;
    const t0 = performance.now();
    const sel = this.selected;
    const k = e.key;
    let handled = true;
    if (this.byKey.has(k)) this.applyType(this.byKey.get(k));
    else if (k === 'j' || k === 'k') this.step(k === 'j' ? 1 : -1);
    else if ((k === ']' || k === '[') && sel) this.grow(sel, k === ']' ? 1 : -1);
    else if (k === '}' && sel) this.shrink(sel, { start: sel.start, end: sel.end - 1 });
    else if (k === '{' && sel) this.shrink(sel, { start: sel.start + 1, end: sel.end });
    else if ((k === 'x' || k === 'Delete' || k === 'Backspace') && sel) this.remove(sel);
    else if (k === 'Escape') { this.selected = null; this.textSel = null; getSelection()?.removeAllRanges(); this.drawSelection(); }
    else if (k === 'd') this.edit({ kind: 'status', status: this.status === 'done' ? 'in_progress' : 'done' });
    else if (k === 'u') this.edit({ kind: 'undo' });
    else if (k === 'n' || k === 'p') this.goDoc(k === 'n' ? 1 : -1);
    else handled = false;
    if (!handled) return;
    e.preventDefault();
    timeKey(this.view, t0);
  }

  step(d) {
    if (!this.spans.length) return;
    const order = [...this.spans].sort((a, b) => a.start - b.start || a.end - b.end);
    const i = order.indexOf(this.selected);
    this.selected = order[i < 0 ? (d > 0 ? 0 : order.length - 1) : (i + d + order.length) % order.length];
    this.drawSelection();
    this.scrollToSelected();
  }

  goDoc(d) {
    const i = this.docs.indexOf(this.doc.id) + d;
    if (this.docs[i]) location.hash = this.docLink(this.docs[i]);
  }

  applyType(k) {
    if (this.textSel) {
      const { start, end } = this.textSel;
      this.textSel = null;
      getSelection()?.removeAllRanges();
      const span = { id: `new-${++tmpID}`, start, end, type: k.type, category: k.category };
      this.spans.push(span);
      this.selected = span;
      this.edit({ kind: 'add', span });
    } else if (this.selected && this.selected.type !== k.type) {
      this.selected.type = k.type;
      this.selected.category = k.category;
      this.edit({ kind: 'change', span: this.selected, type: k.type, category: k.category });
    } else if (!this.selected) {
      this.say('Select some text of the note first (or click a span to change its type).', 'warn');
    }
  }

  /**
   * grow moves span's end (d > 0) or start (d < 0) by a character, past any
   * white space, so that an edge never rests on a space: ] from “Hale” in
   * “Hale, 54” takes the comma, ] again “, 5”.
   */
  grow(span, d) {
    const space = (i) => /\s/.test(this.chars[i]);
    let i = d > 0 ? span.end : span.start - 1;
    while (i >= 0 && i < this.chars.length && space(i)) i += d;
    if (d > 0) this.edge(span, span.start, i + 1);
    else this.edge(span, i, span.end);
  }

  /** shrink moves span to r, trimmed of white space at its edges (nothing when that leaves no text). */
  shrink(span, r) {
    const t = trim(r, this.chars);
    if (t) this.edge(span, t.start, t.end);
  }

  edge(span, start, end) {
    if (start < 0 || end > this.chars.length || end <= start) return;
    span.start = start;
    span.end = end;
    this.edit({ kind: 'change', span, start, end });
  }

  remove(span) {
    this.spans = this.spans.filter((s) => s !== span);
    this.selected = null;
    this.edit({ kind: 'remove', span });
  }

  // ---- writing

  /** edit shows op at once and queues its write after those before it. */
  edit(op) {
    if (op.kind === 'status') this.status = op.status;
    this.say(''); // what the last edit said ("Undone.", a reload) is old news
    this.pending++;
    this.draw();
    this.queue = this.queue.then(() => this.write(op, 0)).then(async () => {
      // A reload while later edits waited drew the server's note without
      // them: once they are written, read it again.
      if (this.pending === 1 && this.stale && !this.signal.aborted) {
        this.stale = false;
        await this.reload().catch((err) => this.say(`Could not reload the note: ${err.message}`, 'error-inline'));
        this.stale = false;
      }
    }).finally(() => {
      this.pending--;
      // The note itself changed only if it was reloaded; else the screen
      // shows it already, and only the state line moves.
      if (this.signal.aborted) return;
      if (this.reloaded) this.draw();
      else this.drawState();
    });
  }

  async write(op, tries) {
    if (this.signal.aborted) return;
    try {
      await this.send(op);
    } catch (err) {
      if (this.signal.aborted) return;
      const conflict = err instanceof ApiError && err.code === 'conflict';
      await this.reload();
      if (conflict && tries < 3 && op.kind !== 'undo' && this.reapply(op)) {
        const who = /was changed by (.+?) since/.exec(err.message)?.[1];
        this.say(`This note was changed elsewhere since you read it${who ? ` (by ${who}, in another tab or place)` : ''}, so the server refused your edit, ${describe(op)}. `
          + `The note is reloaded (now version ${this.version}) and your edit is made again on top.`, 'warn');
        return this.write(op, tries + 1);
      }
      this.say(conflict && op.kind === 'undo'
        ? `This note was changed elsewhere since you read it, so the last edit is no longer yours to undo: it is reloaded (version ${this.version}) and nothing was undone.`
        : `${conflict ? 'Your edit could not be made again on the reloaded note' : 'The server refused the edit'}: ${err.message}. The note is reloaded as the server has it.`, 'error-inline');
    }
  }

  async send(op) {
    const v = this.version;
    const base = { set: this.set.id, document: this.doc.id, version: v };
    let edit;
    switch (op.kind) {
      case 'add':
        edit = (await gql(ADD, { in: { ...base, start: op.span.start, end: op.span.end, type: op.span.type } })).addSpan;
        break;
      case 'change':
        edit = (await gql(CHANGE, { in: { span: op.span.id, version: v, ...(op.type ? { type: op.type } : { start: op.start, end: op.end }) } })).changeSpan;
        break;
      case 'remove':
        edit = (await gql(REMOVE, { span: op.span.id, v })).removeSpan;
        break;
      case 'status': {
        const st = (await gql(STATUS, { set: this.set.id, doc: this.doc.id, s: op.status, v })).setDocumentStatus;
        this.version = st.version;
        this.status = st.status;
        return;
      }
      case 'undo':
        await gql(UNDO, { set: this.set.id, doc: this.doc.id, v });
        await this.reload();
        this.say('Undone.');
        return;
    }
    this.version = edit.state.version;
    this.status = edit.state.status;
    if (!edit.span) return;
    const was = String(op.span.id);
    Object.assign(op.span, edit.span);
    if (was !== String(edit.span.id)) {
      for (const m of this.view.querySelectorAll(`mark[data-id="${CSS.escape(was)}"], button.span-pick[data-id="${CSS.escape(was)}"]`)) {
        m.dataset.id = edit.span.id;
        if (m.id) m.id = `span-${edit.span.id}`;
      }
    }
  }

  async reload() {
    const doc = (await gql(DOC, { doc: this.doc.id, set: this.set.id, setName: this.set.name })).node;
    this.stale = this.pending > 1;
    this.reloaded = true;
    this.load(doc);
  }

  /** reapply makes op's intent on the reloaded note; false when there is nothing left to apply it to. */
  reapply(op) {
    const mine = (s) => this.spans.find((x) => x.id === s.id);
    switch (op.kind) {
      case 'add':
        if (this.spans.some((s) => s.start === op.span.start && s.end === op.span.end && s.type === op.span.type)) return false;
        this.spans.push(op.span);
        return true;
      case 'change': {
        const s = mine(op.span);
        if (!s) return false;
        Object.assign(s, op.type ? { type: op.type, category: op.category } : { start: op.start, end: op.end });
        op.span = s;
        return true;
      }
      case 'remove': {
        const s = mine(op.span);
        if (!s) return false;
        this.spans = this.spans.filter((x) => x !== s);
        op.span = s;
        return true;
      }
      case 'status':
        this.status = op.status;
        return true;
      default:
        return false;
    }
  }
}

function describe(op) {
  switch (op.kind) {
    case 'add': return `add ${op.span.type} at ${op.span.start}–${op.span.end}`;
    case 'change': return op.type ? `make span ${op.span.id} a ${op.type}` : `move span ${op.span.id} to ${op.start}–${op.end}`;
    case 'remove': return `remove span ${op.span.id}`;
    case 'status': return `mark the note ${STATUS_LABEL[op.status]}`;
    default: return op.kind;
  }
}

// The keys a user chose for a tag set's types ({type: key}), kept in this
// browser (Change keys); a store that refuses (private mode) keeps none.
const keysItem = (tagset) => `deidcorpus.typeKeys.${tagset}`;

function chosenKeys(tagset) {
  try {
    const v = JSON.parse(localStorage.getItem(keysItem(tagset)) || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function saveKeys(tagset, chosen) {
  try {
    if (Object.keys(chosen).length) localStorage.setItem(keysItem(tagset), JSON.stringify(chosen));
    else localStorage.removeItem(keysItem(tagset));
  } catch {
    // kept for this page only
  }
}

const ANNOTATE_KEYS = [
  ['a type’s key', 'shown beside it under Types (its first free letter; Shift for a capital): adds the selected text, or changes the picked span'],
  ['j / k', 'pick the next / previous span'],
  [']  }', 'extend / shrink the span’s end by a character (past spaces)'],
  ['[  {', 'extend / shrink its start'],
  ['x, Delete', 'remove the picked span'],
  ['Esc', 'pick nothing'],
  ['u', 'undo the last edit'],
  ['d', 'mark the note done (again: in progress)'],
  ['n / p', 'next / previous note'],
];
