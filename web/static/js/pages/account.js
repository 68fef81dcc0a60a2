// #/accounts/NAME — one account, for admins: its role (changed here), whether
// it is enabled (a disabled account's tokens are refused), the corpora
// assigned to it if it is an annotator, and its tokens: listed, revoked, and
// made for it (shown once). The server refuses to demote or disable the last
// enabled admin, and to assign corpora to anyone but an annotator: its
// refusal is shown as it gave it.

import { gql, notFound } from '../api.js';
import { load, reset } from '../session.js';
import { ROLES, aRole, can } from '../roles.js';
import { h, href, date, card, breadcrumbs } from '../dom.js';
import { tokensCard, loadTokens, errorText } from '../tokens.js';
import { confirmDialog } from '../confirm.js';
import { ROLE_HINT, roleBadge, announcement } from './accounts.js';

const ACCOUNT = `query Account($name: String!) {
  users(first: 1, where: {name: $name}) {
    edges { node { id name role disabled createdAt assignedCorpora { name kind } } }
  }
  admins: users(where: {role: admin, disabled: false}) { totalCount }
}`;

const CORPORA = `query AssignableCorpora { corpora(first: 500, orderBy: {field: NAME}) { edges { node { name kind } } } }`;

const UPDATE = `mutation UpdateUser($name: String!, $role: UserRole, $disabled: Boolean) {
  updateUser(name: $name, role: $role, disabled: $disabled) { id name role disabled }
}`;

const ASSIGN = `mutation AssignCorpus($user: String!, $corpus: String!) { assignCorpus(user: $user, corpus: $corpus) { id } }`;
const UNASSIGN = `mutation UnassignCorpus($user: String!, $corpus: String!) { unassignCorpus(user: $user, corpus: $corpus) { id } }`;

async function account(name, signal) {
  const d = await gql(ACCOUNT, { name }, { signal });
  const user = d.users.edges[0]?.node;
  if (!user) throw notFound(`No account named “${name}”.`);
  return { user, admins: d.admins.totalCount };
}

const kindOf = (k) => (k === 'surrogate' ? 'surrogate' : 'original text');

/** A form's status line: say(text) or say(text, {error: true}) (an alert). */
function statusLine(id) {
  const el = h('p', { class: 'form-status', role: 'status', id, tabindex: '-1' });
  el.say = (text, { error = false } = {}) => {
    el.className = `form-status${error ? ' error-inline' : ' ok'}`;
    el.setAttribute('role', error ? 'alert' : 'status');
    el.textContent = text;
  };
  return el;
}

export async function render({ params, signal, title }) {
  const name = params.name;
  title(name);
  const { me, api } = await load();
  const withCorpora = can('assignCorpora') && api.mutation.has('assignCorpus');
  const withTokens = can('othersTokens') && api.query.has('tokens');
  const [first, corpora, tokens] = await Promise.all([
    account(name, signal),
    withCorpora ? gql(CORPORA, {}, { signal }).then((d) => d.corpora.edges.map((e) => e.node)) : [],
    withTokens ? loadTokens(signal) : [],
  ]);
  let state = first;
  const self = name === me.name;
  const part = h('div', { class: 'account-part' });

  // After a change: the account again, a message on the card that changed
  // it, focus back on that card's status line.
  async function refresh(statusId, text) {
    try {
      state = await account(name);
    } catch (err) {
      document.getElementById(statusId)?.say?.(`Done, but the account could not be reloaded: ${errorText(err)}`, { error: true });
      return;
    }
    draw();
    const el = document.getElementById(statusId);
    el?.say(text);
    el?.focus();
  }

  function roleCard(u, admins) {
    const select = h('select', { id: 'account-role', name: 'role', 'aria-describedby': 'account-role-hint' },
      ROLES.map((r) => h('option', { value: r, selected: r === u.role }, r)));
    const may = (r) => `${aRole(r)[0].toUpperCase()}${aRole(r).slice(1)} may: ${ROLE_HINT[r]}.`;
    const hint = h('small', { class: 'muted', id: 'account-role-hint' }, may(u.role));
    select.addEventListener('change', () => { hint.textContent = may(select.value); });
    const submit = h('button', { type: 'submit', id: 'account-role-submit' }, 'Change role');
    const status = statusLine('account-role-status');
    const form = h('form', {
      class: 'run-form', id: 'account-role-form', 'aria-label': `Change the role of ${u.name}`, novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        const role = select.value;
        if (role === u.role) {
          status.say(`${u.name} is ${aRole(role)} already.`);
          return;
        }
        if (self && u.role === 'admin') {
          const ok = await confirmDialog({
            title: 'Give up your admin role?',
            body: h('p', {}, `You are signed in as ${u.name}: as ${aRole(role)} you will no longer manage accounts or read the audit log, and this page will be closed to you.`),
            confirm: `Make me ${aRole(role)}`,
            danger: true,
          });
          if (!ok) return;
        }
        submit.disabled = true;
        status.say('Changing the role…');
        try {
          await gql(UPDATE, { name: u.name, role });
        } catch (err) {
          status.say(`The role was not changed: ${errorText(err)}`, { error: true });
          status.focus();
          return;
        } finally {
          submit.disabled = false;
        }
        if (self) {
          // Who this browser acts for changed: the account again, on its
          // own page (this one is for admins).
          reset();
          location.hash = '#/settings';
          return;
        }
        await refresh('account-role-status', `${u.name} is now ${aRole(role)}.`);
      },
    },
    h('div', { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: select.id }, `Role of ${u.name}`), select, hint)),
    u.role === 'admin' && !u.disabled && admins <= 1
      ? h('p', { class: 'muted last-admin' }, `${u.name} is the only enabled admin: the server keeps one, so make another admin before changing this one.`)
      : null,
    h('div', { class: 'form-actions' }, submit, status));
    return card('Role', form);
  }

  function accessCard(u) {
    const status = statusLine('account-access-status');
    const button = h('button', {
      type: 'button', id: u.disabled ? 'account-enable' : 'account-disable', class: u.disabled ? '' : 'danger-outline',
      onclick: async () => {
        const disable = !u.disabled;
        if (disable) {
          const ok = await confirmDialog({
            title: `Disable ${u.name}?`,
            body: [
              h('p', {}, `Every token of ${u.name} is refused until the account is enabled again. The tokens are kept, and work again then (those not revoked or expired).`),
              self ? h('p', { class: 'warn' }, h('strong', {}, 'This is your own account: '), 'this browser is signed out at once.') : null,
            ],
            confirm: self ? 'Disable and sign out' : 'Disable',
            danger: true,
          });
          if (!ok) return;
        }
        button.disabled = true;
        status.say(disable ? 'Disabling…' : 'Enabling…');
        try {
          await gql(UPDATE, { name: u.name, disabled: disable });
        } catch (err) {
          status.say(`${u.name} was not ${disable ? 'disabled' : 'enabled'}: ${errorText(err)}`, { error: true });
          status.focus();
          button.disabled = false;
          return;
        }
        if (self && disable) {
          window.dispatchEvent(new CustomEvent('deidcorpus:sign-out', {
            detail: { notice: `You disabled your own account, ${u.name}: its tokens are refused, so this browser is signed out.` },
          }));
          return;
        }
        await refresh('account-access-status', disable ? `${u.name} is disabled: its tokens are refused.` : `${u.name} is enabled again.`);
      },
    }, u.disabled ? 'Enable account' : 'Disable account…');
    return card('Access',
      h('p', { class: 'access-state', 'data-disabled': String(u.disabled) }, u.disabled
        ? [h('strong', {}, 'Disabled: '), 'every token of it is refused. Enabling it lets its tokens work again (those not revoked or expired).']
        : [h('strong', {}, 'Enabled: '), 'its tokens work until they expire or are revoked.']),
      h('div', { class: 'form-actions' }, button, status));
  }

  function corporaCard(u) {
    const status = statusLine('assign-status');
    const assigned = u.assignedCorpora || [];
    const names = new Set(assigned.map((c) => c.name));
    const annotator = u.role === 'annotator';
    const act = async (mutation, corpus, done) => {
      status.say(`${mutation === ASSIGN ? 'Assigning' : 'Unassigning'} ${corpus}…`);
      try {
        await gql(mutation, { user: u.name, corpus });
      } catch (err) {
        status.say(`${corpus} was not ${mutation === ASSIGN ? 'assigned' : 'unassigned'}: ${errorText(err)}`, { error: true });
        status.focus();
        return;
      }
      await refresh('assign-status', done);
    };
    const list = assigned.length
      ? h('ul', { class: 'assigned-corpora' }, assigned.map((c) => h('li', { 'data-corpus': c.name },
        h('a', { href: href(['corpus', c.name]) }, c.name), ' ',
        h('span', { class: `corpus-kind k-${c.kind}` }, kindOf(c.kind)), ' ',
        h('button', {
          type: 'button', class: 'unassign', 'aria-label': `Unassign ${c.name} from ${u.name}`,
          onclick: () => act(UNASSIGN, c.name, `${c.name} is no longer assigned to ${u.name}.`),
        }, 'Unassign'))))
      : h('p', { class: 'empty' }, annotator ? `No corpus is assigned to ${u.name}: it sees none.` : 'None.');
    const free = corpora.filter((c) => !names.has(c.name));
    let form = null;
    if (annotator && free.length) {
      const select = h('select', { id: 'assign-corpus', name: 'corpus' },
        free.map((c) => h('option', { value: c.name }, `${c.name} (${kindOf(c.kind)})`)));
      form = h('form', {
        class: 'inline-form', id: 'assign-form', 'aria-label': `Assign a corpus to ${u.name}`,
        onsubmit: (e) => {
          e.preventDefault();
          act(ASSIGN, select.value, `${select.value} is assigned to ${u.name}.`);
        },
      }, h('label', { for: select.id }, 'Corpus '), select, h('button', { type: 'submit', id: 'assign-submit' }, 'Assign'));
    }
    return card('Assigned corpora',
      annotator
        ? h('p', { class: 'muted' }, `An annotator sees, imports into and runs on only the corpora assigned to it, original text included.`)
        : h('p', { class: 'muted not-annotator' }, `Only annotators are given corpora: ${aRole(u.role)} sees ${u.role === 'researcher' ? 'every surrogate corpus and no original' : 'every corpus'} without them.`,
          assigned.length ? ' These were assigned while it was an annotator, and give it nothing now.' : u.role === 'researcher' ? ` Make ${u.name} an annotator first to assign one.` : ''),
      list,
      form || (annotator && corpora.length ? h('p', { class: 'muted' }, `Every corpus is assigned to ${u.name}.`) : null),
      h('div', { class: 'form-actions' }, status));
  }

  function draw() {
    const { user: u, admins } = state;
    part.replaceChildren(...[
      h('h1', {}, h('span', { class: 'account-title' }, u.name), roleBadge(u.role),
        u.disabled ? h('span', { class: 'tag disabled-tag' }, 'disabled') : null,
        self ? h('span', { class: 'tag' }, 'you') : null),
      h('p', { class: 'meta' }, `Account made ${date(u.createdAt)}.`),
      note,
      h('div', { class: 'grid' }, roleCard(u, admins), accessCard(u)),
      withCorpora ? corporaCard(u) : null,
    ].filter(Boolean));
  }

  const said = announcement(name);
  let note = said ? h('p', { class: 'note-ok', role: 'status', id: 'account-note' }, said.text) : null;
  draw();
  note = null; // said once
  if (said?.focus === 'token') setTimeout(() => document.getElementById('account-token-name')?.focus(), 0);

  return h('div', { class: 'page account-detail' },
    breadcrumbs([['Accounts', '#/accounts'], [name]]),
    part,
    withTokens ? tokensCard({ me, tokens, owner: name, idPrefix: 'account-token' }) : null);
}
