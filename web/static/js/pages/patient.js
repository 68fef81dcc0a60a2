// #/corpus/:name/patient/:patient?set= — one patient's longitudinal record
// set: the notes on a timeline and in a table, in record order.

import { gql, notFound } from '../api.js';
import { h, num, date, href, table, card, breadcrumbs } from '../dom.js';
import { timeline } from '../charts.js';

const PATIENT = `query Patient($corpus: String!, $patient: String!, $set: String!) {
  patients(first: 1, where: {externalID: $patient, hasCorpusWith: {name: $corpus}}) {
    edges { node {
      id externalID
      documents(orderBy: {field: RECORD_ORDER}) {
        totalCount
        edges { node {
          id externalID recordOrder noteType created split charCount tokenCount
          phi: spans(where: {hasAnnotationSetWith: {name: $set}}) { totalCount }
        } }
      }
    } }
  }
}`;

const SPLIT_COLOR = { train: '#1f3a5f', dev: '#2a9d8f', test: '#c1502e', unassigned: '#7a7a7a' };

export async function render({ params, query, signal, title }) {
  const { name, patient } = params;
  const set = query.set || 'gold';
  title(`Patient ${patient} · ${name}`);
  const data = await gql(PATIENT, { corpus: name, patient, set }, { signal });
  const p = data.patients.edges[0]?.node;
  if (!p) throw notFound(`Corpus “${name}” has no patient “${patient}”.`);
  const docs = p.documents.edges.map((e) => e.node);
  const docHref = (d) => href(['corpus', name, 'doc', d.externalID], { set: query.set });
  const label = (d) => `Note ${d.recordOrder || '?'}: ${d.externalID}${d.noteType ? ', ' + d.noteType : ''}${d.created ? ', ' + date(d.created) : ''}, ${d.split}, ${d.phi.totalCount} PHI`;

  return h('div', { class: 'page' },
    breadcrumbs([['Corpora', '#/'], [name, href(['corpus', name], { set: query.set })], [`Patient ${patient}`]]),
    h('h1', {}, `Patient ${patient}`, h('span', { class: 'tag' }, `${docs.length} note${docs.length === 1 ? '' : 's'}`)),
    docs.length ? card(null, timeline({
      title: 'Timeline of notes',
      notes: docs.map((d) => ({
        label: String(d.recordOrder || '?'), when: d.created, href: docHref(d), title: label(d),
        caption: d.created ? date(d.created) : d.externalID, color: SPLIT_COLOR[d.split],
      })),
    }), h('p', { class: 'legend' }, Object.entries(SPLIT_COLOR).filter(([s]) => docs.some((d) => d.split === s)).map(([s, c]) =>
      h('span', { class: 'legend-item' }, h('span', { class: 'swatch round', vars: { '--c': c }, 'aria-hidden': 'true' }), s)))) : null,
    card('Notes', table([
      { label: '#', num: true, value: (d) => d.recordOrder || '—' },
      { label: 'Document', value: (d) => h('a', { href: docHref(d) }, d.externalID), rowHeader: false },
      { label: 'Note type', value: (d) => d.noteType || '—' },
      { label: 'Written', value: (d) => date(d.created) || '—' },
      { label: 'Split', value: (d) => d.split },
      { label: 'Tokens', num: true, value: (d) => num(d.tokenCount) },
      { label: `PHI (${set})`, num: true, value: (d) => num(d.phi.totalCount) },
    ], docs, { cls: 'notes', empty: 'This patient has no notes.' })),
  );
}
