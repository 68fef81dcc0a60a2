// #/accounts — every account, for admins: role, enabled or not, the corpora
// assigned to annotators, how many tokens work; and a form to make one. An
// account's own page (#/accounts/NAME) changes it and makes its tokens.

import { gql } from '../api.js';
import { load } from '../session.js';
import { ROLES } from '../roles.js';
import { h, num, date, href, card } from '../dom.js';
import { status, errorText } from '../tokens.js';

const LIMIT = 500;

const ACCOUNTS = `query Accounts($first: Int) {
  users(first: $first, orderBy: {field: NAME}) {
    totalCount
    edges { node { id name role disabled createdAt assignedCorpora { name } tokens { id status } } }
  }
}`;

const CREATE = `mutation CreateUser($name: String!, $role: UserRole!) {
  createUser(name: $name, role: $role) { id name role }
}`;

/** What each role may, in a few words (the role select, the account page). */
export const ROLE_HINT = {
  admin: 'everything, including accounts and the audit log',
  curator: 'every corpus, original text and mappings; resynthesis and releases',
  annotator: 'only the corpora assigned to it: import, annotate, run',
  researcher: 'surrogate corpora and their releases only, never original notes',
};

export const roleBadge = (role) => h('span', { class: 'role-badge', 'data-role': role }, role);

// What the next page of an account says first (it was just made), and where
// the focus goes: {name, text, focus}.
let pending = null;

/** announce leaves a message for the page of account name, shown once. */
export function announce(name, text, focus) {
  pending = { name, text, focus };
}

/** announcement takes the message left for account name, if any. */
export function announcement(name) {
  const a = pending?.name === name ? pending : null;
  pending = null;
  return a;
}

export async function render({ signal, title }) {
  title('Accounts');
  const { me } = await load();
  const { users } = await gql(ACCOUNTS, { first: LIMIT }, { signal });
  const list = users.edges.map((e) => e.node);
  const admins = list.filter((u) => u.role === 'admin' && !u.disabled).length;

  const rows = list.map((u) => {
    const active = (u.tokens || []).filter((t) => status(t) === 'active').length;
    const corpora = (u.assignedCorpora || []).map((c) => c.name);
    return h('tr', { 'data-account': u.name, 'data-role': u.role, 'data-disabled': String(u.disabled) },
      h('th', { scope: 'row' }, h('a', { href: href(['accounts', u.name]), class: 'account-link' }, u.name),
        u.name === me.name ? h('span', { class: 'muted' }, ' (you)') : null),
      h('td', { class: 'role' }, roleBadge(u.role)),
      h('td', { class: 'state' }, u.disabled
        ? h('span', { class: 'token-status t-revoked', title: 'its tokens are refused' }, 'disabled')
        : h('span', { class: 'token-status t-active' }, 'enabled')),
      h('td', { class: 'corpora' }, corpora.length ? corpora.join(', ') : h('span', { class: 'muted' }, u.role === 'annotator' ? 'none yet' : '—')),
      h('td', { class: 'num tokens-count' }, num(active)),
      h('td', { class: 'created' }, h('time', { datetime: u.createdAt, title: u.createdAt }, date(u.createdAt))));
  });
  const table = list.length
    ? h('div', { class: 'table-wrap' }, h('table', { class: 'compact accounts' },
      h('caption', {}, `${num(users.totalCount)} account${users.totalCount === 1 ? '' : 's'}, by name; ${num(admins)} enabled admin${admins === 1 ? '' : 's'}.`,
        users.totalCount > list.length ? ` The first ${num(list.length)} are shown.` : ''),
      h('thead', {}, h('tr', {}, ['Account', 'Role', 'State', 'Assigned corpora', 'Active tokens', 'Created'].map((l, i) =>
        h('th', { scope: 'col', class: i === 4 ? 'num' : '' }, l)))),
      h('tbody', {}, rows)))
    : h('p', { class: 'empty' }, 'No accounts.');

  return h('div', { class: 'page accounts-page' },
    h('h1', {}, 'Accounts'),
    h('p', { class: 'lead' }, 'Who may use deidcorpus, with which role. Open an account to change its role, disable it, assign corpora to it (annotators) or make it a token.'),
    card(null, table),
    createForm());
}

function createForm() {
  const name = h('input', {
    id: 'new-account-name', name: 'name', required: true, autocomplete: 'off', spellcheck: 'false',
    'aria-describedby': 'new-account-name-hint',
  });
  const role = h('select', { id: 'new-account-role', name: 'role', required: true, 'aria-describedby': 'new-account-role-hint' },
    h('option', { value: '', selected: true }, 'choose a role…'),
    ROLES.map((r) => h('option', { value: r }, `${r}: ${ROLE_HINT[r]}`)));
  const submit = h('button', { type: 'submit' }, 'Make account');
  const status_ = h('p', { class: 'form-status', role: 'status', id: 'new-account-status', tabindex: '-1' });
  const fail = (text, focus) => {
    status_.className = 'form-status error-inline';
    status_.setAttribute('role', 'alert');
    status_.textContent = text;
    (focus || status_).focus();
  };
  const form = h('form', {
    class: 'run-form', id: 'new-account-form', 'aria-label': 'Make an account', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      status_.className = 'form-status';
      status_.setAttribute('role', 'status');
      // The server checks the name; an empty role would only get a parser's message.
      if (!role.value) return fail('Choose the account’s role.', role);
      submit.disabled = true;
      status_.textContent = 'Making the account…';
      try {
        const { createUser: u } = await gql(CREATE, { name: name.value.trim(), role: role.value });
        announce(u.name, `Account ${u.name} made, with the ${u.role} role. Make it a token below: it signs in with one.`, 'token');
        location.hash = href(['accounts', u.name]);
      } catch (err) {
        fail(`Could not make the account: ${errorText(err)}`);
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('div', { class: 'fields' },
    h('div', { class: 'field' }, h('label', { for: name.id }, 'Name'), name,
      h('small', { class: 'muted', id: 'new-account-name-hint' }, 'No spaces or “:”; it is shown in the audit log.')),
    h('div', { class: 'field wide-field' }, h('label', { for: role.id }, 'Role'), role,
      h('small', { class: 'muted', id: 'new-account-role-hint' }, 'An annotator sees nothing until a corpus is assigned to it.'))),
  h('div', { class: 'form-actions' }, submit, status_));
  return card('Make an account', form);
}
