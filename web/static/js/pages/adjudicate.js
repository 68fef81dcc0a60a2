// #/corpus/:name/adjudicate?sets=a,b&into=gold&doc= — adjudication, keyboard
// first (curators). Without sets: choose two or more sets and the set the
// decisions go into. With them: a note with the sets' spans grouped where
// they overlap (the server's disagreements, by the evaluation's strict
// rule), merged into one text or side by side (s), each group coloured by
// its kind; j/k walk the disagreements, a set's key (1, 2, …) or a click
// accepts its spans of the group into the target set, a copies every
// agreement, u undoes, d marks the note done there, n/p change note. The
// agreement of each pair of sets (and of each with the target) is shown
// and read again after every decision.

import { gql, ApiError, notFound } from '../api.js';
import { h, href, card, breadcrumbs, table, num, pct } from '../dom.js';
import { codePointIndex } from '../overlay.js';
import { note, drawNote, typing, timeKey, keysCard } from '../notemarks.js';

const SETS = `query AdjudicationSets($name: String!) {
  corpusByName(name: $name) { id annotationSets { id name kind annotator progress { documentID status } } }
}`;
const DOC = `query AdjudicatedDocument($name: String!, $sets: [String!]!, $doc: ID!, $into: ID!, $intoName: String!) {
  disagreements(corpus: $name, sets: $sets, document: $doc, all: true) { kind start end sets { set spans { id start end category type } } }
  node(id: $doc) { ... on Document { id externalID text
    annotationState(set: $into) { status version }
    annotations(set: $intoName) { id start end category type } } }
}`;
const AGREEMENT = `query Agreement($name: String!, $sets: [String!]!) {
  agreement(corpus: $name, sets: $sets) { a b documents f1 byType { type f1 counts { tp fp fn } } }
}`;
const ACCEPT = 'mutation Accept($span: ID!, $into: ID!, $v: Int!) { acceptSpan(span: $span, into: $into, version: $v) { state { status version } } }';
const UNDO = 'mutation UndoAccept($set: ID!, $doc: ID!, $v: Int!) { undoEdit(set: $set, document: $doc, version: $v) { state { status version } } }';
const STATUS = `mutation DoneAdjudicating($set: ID!, $doc: ID!, $s: AnnotationStatus!, $v: Int!) {
  setDocumentStatus(set: $set, document: $doc, status: $s, version: $v) { status version }
}`;

/** Disagreement kinds (store/adjudicate.go), in the legend's order. */
export const KINDS = [
  { kind: 'boundary', help: 'one label, offsets differ' },
  { kind: 'type', help: 'same offsets, labels differ' },
  { kind: 'boundary_and_type', help: 'offsets and labels differ' },
  { kind: 'only_in_some', help: 'a set has nothing there, or several spans where another has one' },
  { kind: 'same', help: 'the sets agree' },
];

export async function render({ params, query, signal, title }) {
  const { name } = params;
  const { corpusByName: corpus } = await gql(SETS, { name }, { signal });
  if (!corpus) throw notFound(`There is no corpus named “${name}”.`);
  const all = corpus.annotationSets || [];
  const names = (query.sets || '').split(',').filter(Boolean);
  const sets = names.map((n) => all.find((s) => s.name === n));
  const into = all.find((s) => s.name === (query.into || 'gold'));
  if (names.length < 2 || sets.some((s) => !s) || !into || names.includes(into.name)) {
    title(`Adjudicate · ${name}`);
    return chooser(name, all, names, query.into, names.length ? 'Choose two or more sets that exist, and a target set that is not one of them.' : '');
  }
  const docs = [...new Set(sets.flatMap((s) => s.progress.map((p) => p.documentID)))];
  if (!docs.length) throw notFound(`The sets ${names.join(', ')} hold no documents yet.`);
  const docID = docs.includes(query.doc) ? query.doc : docs[0];
  const adj = new Adjudicator({ name, sets, into, docs, signal });
  await adj.load(docID);
  title(`Adjudicate ${adj.doc.externalID} · ${name}`);
  adj.build();
  return adj.view;
}

function chooser(name, all, chosen, into, problem) {
  const boxes = all.map((s) => h('label', { class: 'inline' },
    h('input', { type: 'checkbox', name: 'set', value: s.name, checked: chosen.includes(s.name) }), ` ${s.name} (${s.kind}${s.annotator ? ', ' + s.annotator : ''}) `));
  const say = h('p', { class: 'warn', role: 'alert', id: 'adj-choose-problem', hidden: true });
  const target = h('select', { id: 'adj-into', name: 'into' }, all.map((s) => h('option', { value: s.name, selected: s.name === (into || 'gold') }, s.name)));
  return h('div', { class: 'page adjudicate-choose' },
    breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name])], ['Adjudicate']]),
    h('h1', {}, `Adjudicate ${name}`),
    problem ? h('p', { class: 'warn', role: 'alert' }, problem) : null,
    card('Sets', h('form', {
      class: 'stack', id: 'adj-form',
      onsubmit: (e) => {
        e.preventDefault();
        const sets = boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
        const problem = sets.length < 2
          ? (sets.length ? 'Tick a second set: adjudicating compares two sets or more.' : 'Tick the sets to compare: two or more.')
          : sets.includes(target.value) ? `Decisions cannot go into ${target.value}, one of the sets compared: choose another target.` : '';
        if (problem) {
          // Said here, at once, beside the form.
          say.textContent = problem;
          say.hidden = false;
          return;
        }
        location.hash = href(['corpus', name, 'adjudicate'], { sets: sets.join(','), into: target.value });
      },
    }, h('fieldset', {}, h('legend', {}, 'Compare'), boxes),
    say,
    h('label', {}, 'Write decisions into ', target),
    h('div', {}, h('button', { type: 'submit' }, 'Adjudicate')))));
}

/** Adjudicator is one note's adjudication view. */
class Adjudicator {
  constructor({ name, sets, into, docs, signal }) {
    Object.assign(this, { name, sets, into, docs, signal });
    this.names = sets.map((s) => s.name);
    this.current = -1;
    this.sideBySide = false;
    this.queue = Promise.resolve();
  }

  async load(docID) {
    const d = await gql(DOC, { name: this.name, sets: this.names, doc: docID, into: this.into.id, intoName: this.into.name }, { signal: this.signal });
    if (!d.node) throw notFound(`Document ${docID} is not in corpus “${this.name}”.`);
    this.doc = d.node;
    this.idx = codePointIndex(d.node.text);
    this.groups = d.disagreements.map((g, i) => ({ ...g, i }));
    this.target = d.node.annotations;
    this.version = d.node.annotationState.version;
    this.status = d.node.annotationState.status;
  }

  build() {
    const at = this.docs.indexOf(this.doc.id);
    const link = (i) => href(['corpus', this.name, 'adjudicate'], { sets: this.names.join(','), into: this.into.name, doc: this.docs[i] });
    this.docLink = link;
    const go = (i) => (this.docs[i] ? h('a', { class: 'button', href: link(i), rel: i < at ? 'prev' : 'next' }, i < at ? '← previous (p)' : 'next (n) →') : null);
    this.noteWrap = h('div', { class: 'adj-notes' });
    this.noteWrap.addEventListener('click', (e) => {
      const m = e.target.closest('mark[data-group]');
      if (m) this.select(Number(m.dataset.group));
    });
    this.statusLine = h('p', { class: 'annotate-status', id: 'adj-status', role: 'status' });
    this.message = h('div', { id: 'adj-message', 'aria-live': 'polite' });
    this.groupCard = h('div', { id: 'adj-group' });
    this.agreementCard = h('div', { id: 'adj-agreement' }, h('p', { class: 'muted' }, 'Reading agreement…'));
    this.view = h('div', { class: 'page adjudicate-page', 'data-doc': this.doc.id },
      breadcrumbs([['Corpora', '#/'], [this.name, href(['corpus', this.name])], ['Adjudicate', href(['corpus', this.name, 'adjudicate'])], [this.doc.externalID]]),
      h('div', { class: 'title-row' },
        h('h1', {}, this.doc.externalID, h('span', { class: 'tag' }, `${this.names.join(' · ')} → ${this.into.name}`)),
        h('nav', { class: 'actions', 'aria-label': 'Notes' }, `Note ${at + 1} of ${this.docs.length} `, go(at - 1), go(at + 1))),
      this.statusLine, this.message,
      h('div', { class: 'doc-layout' }, this.noteWrap,
        h('aside', { class: 'doc-side' }, card('Disagreement', this.groupCard), legend(), card('Agreement', this.agreementCard), keysCard(this.keyRows()))));
    this.step(1);
    this.draw();
    this.readAgreement();
    document.addEventListener('keydown', (e) => this.key(e), { signal: this.signal });
  }

  keyRows() {
    return [
      ['j / k', 'next / previous disagreement'],
      [this.names.map((_, i) => i + 1).join(' / '), `accept ${this.names.join(' / ')}’s spans of it into ${this.into.name}`],
      ['a', 'accept every agreement of the note'],
      ['u', `undo the last edit in ${this.into.name}`],
      ['s', 'the sets merged / side by side'],
      ['d', `mark the note done in ${this.into.name}`],
      ['n / p', 'next / previous note'],
    ];
  }

  /** decided tells whether the target holds a span inside group g. */
  decided(g) {
    return this.target.some((t) => t.start < g.end && g.start < t.end);
  }

  disagreements() {
    return this.groups.filter((g) => g.kind !== 'same');
  }

  // ---- drawing

  draw() {
    const g = this.groups[this.current];
    const mark = (grp, first) => ({
      class: ['adj', `k-${grp.kind}`, grp === g ? 'current' : '', this.decided(grp) ? 'decided' : ''].join(' ').trim(),
      'data-group': grp.i, 'data-kind': grp.kind, id: first ? `group-${grp.i}` : undefined,
      'data-tip': `${grp.kind}: ${grp.sets.map((s) => `${s.set} ${s.spans.map((x) => `${x.type} ${x.start}–${x.end}`).join(', ') || '—'}`).join(' · ')}`,
    });
    if (this.sideBySide) {
      const cols = this.names.map((n, k) => {
        const items = this.groups.flatMap((grp) => grp.sets[k].spans.map((s) => ({ start: s.start, end: s.end, grp })));
        return h('div', { class: 'note-wrap', 'data-set': n }, h('h2', {}, `${k + 1} · ${n}`),
          drawNote(h('pre', { class: 'note' }), this.doc.text, this.idx, items, (it) => mark(it.grp, false)));
      });
      this.noteWrap.className = 'adj-notes side-by-side';
      this.noteWrap.style.setProperty('--cols', String(cols.length));
      this.noteWrap.replaceChildren(...cols);
    } else {
      this.noteWrap.className = 'adj-notes';
      this.noteWrap.replaceChildren(h('div', { class: 'note-wrap' }, drawNote(note(), this.doc.text, this.idx, this.groups, mark)));
    }
    const dis = this.disagreements();
    const left = dis.filter((x) => !this.decided(x)).length;
    this.view.dataset.version = String(this.version);
    this.statusLine.replaceChildren(
      h('span', { class: `status s-${this.status}` }, this.status.replace('_', ' ')), ' ',
      h('span', { id: 'adj-progress' }, `${dis.length - left} of ${dis.length} disagreements decided`), ' · ',
      `${this.target.length} spans in ${this.into.name} (version ${this.version})`);
    this.groupCard.replaceChildren(...(g ? this.groupView(g) : [h('p', { class: 'muted' }, dis.length ? 'Press j for the first disagreement.' : 'The sets agree on this note: press a to accept their spans.')]));
  }

  groupView(g) {
    const text = (s) => [...this.doc.text].slice(s.start, s.end).join('');
    return [
      h('p', {}, h('span', { class: `kind-badge k-${g.kind}` }, g.kind.replaceAll('_', ' ')), ` ${g.start}–${g.end}`, this.decided(g) ? h('span', { class: 'muted' }, ` · decided in ${this.into.name}`) : null),
      h('div', { class: 'adj-sides', vars: { '--cols': String(g.sets.length) } }, g.sets.map((s, k) => h('div', { class: 'adj-side', 'data-set': s.set },
        h('h3', {}, s.set),
        s.spans.length ? h('ul', {}, s.spans.map((x) => h('li', {}, h('strong', {}, x.type), ` “${text(x)}” `, h('span', { class: 'muted' }, `${x.start}–${x.end}`)))) : h('p', { class: 'muted' }, 'nothing'),
        s.spans.length ? h('button', { type: 'button', class: 'accept', 'data-set': s.set, onclick: () => this.accept(k) }, h('kbd', {}, String(k + 1)), ' accept') : null))),
    ];
  }

  async readAgreement() {
    const asked = (this.agreementAsked = (this.agreementAsked || 0) + 1);
    try {
      const { agreement } = await gql(AGREEMENT, { name: this.name, sets: [...this.names, this.into.name] }, { signal: this.signal });
      if (asked !== this.agreementAsked) return; // a later reading is on its way
      this.agreementCard.replaceChildren(table([
        { label: 'Pair', value: (p) => `${p.a} · ${p.b}` },
        { label: 'Notes', num: true, value: (p) => num(p.documents) },
        { label: 'F1', num: true, value: (p) => pct(p.f1), cls: 'f1' },
        { label: 'By type', value: (p) => p.byType.map((t) => `${t.type} ${pct(t.f1)}`).join(' · ') || '—' },
      ], agreement, { cls: 'compact agreement', empty: 'No pair shares a note yet.' }));
    } catch (err) {
      if (!this.signal.aborted) this.agreementCard.replaceChildren(h('p', { class: 'error-inline' }, `Agreement: ${err.message}`));
    }
  }

  say(text, cls = 'note-ok') {
    this.message.replaceChildren(text ? h('p', { class: cls, role: cls === 'note-ok' ? 'status' : 'alert' }, text) : '');
  }

  // ---- keys

  key(e) {
    if (typing(e) || e.defaultPrevented) return;
    const t0 = performance.now();
    const k = e.key;
    const n = Number(k);
    if (k === 'j' || k === 'k') this.step(k === 'j' ? 1 : -1);
    else if (n >= 1 && n <= this.names.length) this.accept(n - 1);
    else if (k === 'a') this.acceptAgreements();
    else if (k === 'u') this.write([{ undo: true }], 'Undone.');
    else if (k === 'd') this.write([{ status: this.status === 'done' ? 'in_progress' : 'done' }], '');
    else if (k === 's') { this.sideBySide = !this.sideBySide; this.draw(); }
    else if (k === 'n' || k === 'p') {
      const i = this.docs.indexOf(this.doc.id) + (k === 'n' ? 1 : -1);
      if (this.docs[i]) location.hash = this.docLink(i);
    } else return;
    e.preventDefault();
    timeKey(this.view, t0);
  }

  select(i) {
    this.current = i;
    this.draw();
    document.getElementById(`group-${i}`)?.scrollIntoView({ block: 'nearest' });
  }

  /** step moves to the next (or previous) disagreement, undecided ones first. */
  step(d) {
    const dis = this.disagreements();
    if (!dis.length) return;
    const pool = dis.some((g) => !this.decided(g)) ? dis.filter((g) => !this.decided(g) || g.i === this.current) : dis;
    const at = pool.findIndex((g) => g.i === this.current);
    const next = at < 0 ? (d > 0 ? pool.find((g) => g.i > this.current) || pool[0] : pool.at(-1)) : pool[(at + d + pool.length) % pool.length];
    this.select(next.i);
  }

  accept(k) {
    const g = this.groups[this.current];
    if (!g) return this.say('Pick a disagreement first (j, or click it in the note).', 'warn');
    const spans = g.sets[k].spans;
    if (!spans.length) return this.say(`${this.names[k]} has nothing here to accept.`, 'warn');
    return this.write(spans.map((s) => ({ span: s })), `Accepted ${this.names[k]}’s ${spans.map((s) => s.type).join(', ')} into ${this.into.name}.`, true);
  }

  acceptAgreements() {
    const todo = this.groups.filter((g) => g.kind === 'same' && !this.decided(g)).map((g) => ({ span: g.sets[0].spans[0] }));
    if (!todo.length) return this.say('Every agreement of this note is in the target already.', 'note-ok');
    return this.write(todo, `Accepted ${todo.length} agreement${todo.length === 1 ? '' : 's'} into ${this.into.name}.`);
  }

  /**
   * write sends ops in order (accept a span, undo, a status), each against
   * the version the last left; on a conflict (someone else wrote the note in
   * the target) it reloads and makes the rest again, skipping spans the
   * target holds already. Then it reads the note and the agreement again.
   */
  write(ops, done, advance = false) {
    this.queue = this.queue.then(async () => {
      let conflicts = 0;
      try {
        for (let i = 0; i < ops.length; i++) {
          const op = ops[i];
          if (op.span && this.target.some((t) => t.start === op.span.start && t.end === op.span.end && t.type === op.span.type)) continue;
          try {
            if (op.span) this.version = (await gql(ACCEPT, { span: op.span.id, into: this.into.id, v: this.version })).acceptSpan.state.version;
            else if (op.undo) this.version = (await gql(UNDO, { set: this.into.id, doc: this.doc.id, v: this.version })).undoEdit.state.version;
            else this.version = (await gql(STATUS, { set: this.into.id, doc: this.doc.id, s: op.status, v: this.version })).setDocumentStatus.version;
          } catch (err) {
            if (!(err instanceof ApiError && err.code === 'conflict') || op.undo || ++conflicts > 3) throw err;
            await this.load(this.doc.id);
            this.say(`${this.into.name} was changed elsewhere since you read it: reloaded (version ${this.version}), and your decision is made again on top.`, 'warn');
            i--;
          }
        }
        await this.load(this.doc.id);
        if (done && !conflicts) this.say(done);
      } catch (err) {
        if (this.signal.aborted) return;
        await this.load(this.doc.id).catch(() => {});
        this.say(`The server refused: ${err.message}. The note is shown as the server has it.`, 'error-inline');
      }
      if (this.signal.aborted) return;
      if (advance && this.disagreements().some((g) => !this.decided(g))) this.step(1);
      this.draw();
      this.readAgreement();
    });
    return this.queue;
  }
}

function legend() {
  return card('Kinds', h('ul', { class: 'legend-list kinds' }, KINDS.map((k) => h('li', { 'data-kind': k.kind },
    h('span', { class: `swatch k-${k.kind}`, 'aria-hidden': 'true' }), h('strong', {}, k.kind.replaceAll('_', ' ')), h('span', { class: 'muted' }, ` · ${k.help}`)))));
}
