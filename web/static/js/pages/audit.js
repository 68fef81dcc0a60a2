// #/audit?actor=&action=&target=&after=&before=&n= — the audit log, for
// admins: newest first, n entries a page (Relay cursors), filtered by actor,
// action and target. Every PHI field read, mutation, download and refusal is an
// entry; the entries form a hash chain that `deidcorpus audit verify` checks.

import { gql } from '../api.js';
import { h, num, href, card } from '../dom.js';

const PAGE = 50; // entries a page unless ?n= says otherwise (at most 500)
const SHOWN_IDS = 3; // ids shown before "+N more"
export const ACTIONS = ['read', 'write', 'export', 'denied', 'cli'];

const AUDIT = `query Audit($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: AuditEntryWhereInput) {
  auditEntries(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: {field: SEQ, direction: DESC}) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { node { id seq at actor action target ids detail hash } }
  }
  users(first: 500) { edges { node { name } } }
}`;

/** where turns the page's filters into an AuditEntryWhereInput (null: all). */
export function where({ actor, action, target }) {
  const w = {};
  if (actor) w.actorEqualFold = actor;
  if (action) w.action = action;
  if (target) w.targetContainsFold = target;
  return Object.keys(w).length ? w : null;
}

const time = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(0, 19).replace('T', ' ');
};

// The pager again below a long table.
function bottom(pager) {
  if (!pager) return null;
  const b = pager.cloneNode(true);
  b.setAttribute('aria-label', 'Audit log pages, below the table');
  return b;
}

function idsCell(ids) {
  if (!ids?.length) return h('span', { class: 'muted' }, '—');
  if (ids.length <= SHOWN_IDS) return h('span', { class: 'ids' }, ids.join(', '));
  return h('span', { class: 'ids' }, ids.slice(0, SHOWN_IDS).join(', '), ' ',
    h('details', { class: 'ids-more' },
      h('summary', { 'aria-label': `Show all ${ids.length} ids` }, `+${num(ids.length - SHOWN_IDS)} more`),
      h('div', { class: 'ids-all' }, ids.join(', '))));
}

export async function render({ query, signal, title }) {
  title('Audit log');
  const filters = { actor: (query.actor || '').trim(), action: query.action || '', target: (query.target || '').trim() };
  const n = Math.min(500, Math.max(1, Number.parseInt(query.n, 10) || PAGE));
  const keep = { ...filters, n: n === PAGE ? '' : n }; // what every link of the page carries on
  const vars = { where: where(filters) };
  if (query.before) Object.assign(vars, { last: n, before: query.before });
  else Object.assign(vars, { first: n, after: query.after || null });
  const { auditEntries: log, users } = await gql(AUDIT, vars, { signal });
  const rows = log.edges.map((e) => e.node);
  const pi = log.pageInfo;
  const filtered = Boolean(vars.where);

  // Filters: a plain form; submitting it starts again at the newest entry.
  const actor = h('input', { id: 'audit-actor', name: 'actor', value: filters.actor, list: 'audit-actors', autocomplete: 'off', placeholder: 'any' });
  const action = h('select', { id: 'audit-action', name: 'action' },
    h('option', { value: '' }, 'any'),
    [...new Set([...ACTIONS, filters.action].filter(Boolean))].map((a) => h('option', { value: a, selected: a === filters.action }, a)));
  const target = h('input', { id: 'audit-target', name: 'target', value: filters.target, autocomplete: 'off', placeholder: 'e.g. Document.text' });
  const form = h('form', {
    class: 'controls audit-filters', role: 'search', 'aria-label': 'Filter the audit log',
    onsubmit: (e) => {
      e.preventDefault();
      location.hash = href(['audit'], { actor: actor.value.trim(), action: action.value, target: target.value.trim(), n: keep.n });
    },
  },
  h('label', { for: 'audit-actor' }, 'Actor '), actor,
  h('datalist', { id: 'audit-actors' }, users.edges.map((e) => h('option', { value: e.node.name }))),
  h('label', { for: 'audit-action' }, 'Action '), action,
  h('label', { for: 'audit-target' }, 'Target contains '), target,
  h('button', { type: 'submit' }, 'Filter'),
  filtered ? h('a', { href: href(['audit'], { n: keep.n }), class: 'clear-filters' }, 'Clear filters') : null);

  // Newer is towards the top of the log, older towards its start.
  const newer = pi.startCursor && (pi.hasPreviousPage || query.after) && rows.length
    ? h('a', { class: 'button pager-newer', rel: 'prev', href: href(['audit'], { ...keep, before: pi.startCursor }) }, '← Newer') : null;
  const older = pi.endCursor && (pi.hasNextPage || query.before) && rows.length
    ? h('a', { class: 'button pager-older', rel: 'next', href: href(['audit'], { ...keep, after: pi.endCursor }) }, 'Older →') : null;
  const pager = newer || older
    ? h('nav', { class: 'pager', 'aria-label': 'Audit log pages' },
      newer, older,
      query.after || query.before ? h('a', { href: href(['audit'], keep), class: 'pager-newest' }, 'Newest') : null)
    : null;

  const range = rows.length ? `entries ${num(rows[0].seq)} to ${num(rows.at(-1).seq)}` : 'no entries';
  const table = rows.length
    ? h('div', { class: 'table-wrap' }, h('table', { class: 'compact audit' },
      h('caption', {}, `${num(log.totalCount)} ${filtered ? 'matching ' : ''}entr${log.totalCount === 1 ? 'y' : 'ies'}, newest first; this page: ${range}.`),
      h('thead', {}, h('tr', {}, ['Seq', 'Time (UTC)', 'Actor', 'Action', 'Target', 'IDs', 'Detail', 'Hash'].map((l, i) =>
        h('th', { scope: 'col', class: i === 0 ? 'num' : '' }, l)))),
      h('tbody', {}, rows.map((r) => h('tr', { 'data-seq': r.seq, 'data-action': r.action },
        h('th', { scope: 'row', class: 'num seq' }, String(r.seq)),
        h('td', { class: 'at' }, h('time', { datetime: r.at, title: r.at }, time(r.at))),
        h('td', { class: 'actor' }, r.actor),
        h('td', { class: 'action' }, h('span', { class: `audit-action a-${r.action}` }, r.action)),
        h('td', { class: 'target' }, h('code', {}, r.target)),
        h('td', { class: 'ids-cell' }, idsCell(r.ids)),
        h('td', { class: 'detail' }, r.detail || h('span', { class: 'muted' }, '—')),
        h('td', { class: 'hash' }, h('code', { class: 'hash', title: r.hash }, r.hash.slice(0, 10))))))))
    : h('p', { class: 'empty' }, filtered ? 'No entry matches these filters.' : 'The audit log is empty.');

  return h('div', { class: 'page audit-page' },
    h('h1', {}, 'Audit log'),
    h('p', { class: 'lead' }, 'Who read PHI (note and span text, mapping originals, check reports), changed anything, downloaded, or was refused: one entry per operation and field.'),
    card(null, form, pager, table, bottom(pager)),
    card('Checking the chain',
      h('p', {}, 'The log is append-only, and each entry’s hash covers the entry before it, so an entry changed or removed in the database breaks the chain. ',
        h('code', {}, 'deidcorpus audit verify --db DB'), ' recomputes every hash and prints the last one: keep that hash somewhere else, and a log cut short shows too.')));
}
