// API tokens in the dashboard: the list, making one (its secret shown this
// once, with a copy button) and revoking one. Two pages use it: the account
// page (#/settings: your own tokens; an admin's lists every account's, since
// admins see them all) and an account's page (#/accounts/NAME, admins: that
// account's tokens, and making one for it).
//
// The server says each token's status and whether this request came with it
// (Token.status, Token.current).

import { gql } from './api.js';
import { h, date, num, card } from './dom.js';
import { can } from './roles.js';
import { confirmDialog } from './confirm.js';

export const TOKENS = `query Tokens {
  tokens { id name prefix createdAt expiresAt lastUsedAt revokedAt status current user { name disabled } }
}`;

const CREATE = `mutation CreateToken($user: String, $name: String!, $days: Int) {
  createToken(user: $user, name: $name, expiresInDays: $days) { token info { id prefix expiresAt user { name } } }
}`;

const REVOKE = `mutation RevokeToken($id: ID!) { revokeToken(id: $id) { id revokedAt } }`;

export const DEFAULT_DAYS = 90;
// The longest lifetime the server accepts (auth.MaxTokenDays).
export const MAX_DAYS = 36500;

/** status is the server's: 'active', 'expired' or 'revoked'. */
export const status = (t) => t.status;

/** errorText is an error fit to show: never blank. */
export function errorText(err) {
  const m = err?.message || (err ? String(err) : '');
  return m && m !== '[object Object]' ? m : 'The server gave no reason (its log may say more).';
}

const DAY = 86_400_000;
function when(iso, { future = false } = {}) {
  if (!iso) return null;
  const ms = Date.parse(iso) - Date.now();
  const days = Math.round(Math.abs(ms) / DAY);
  let rel = '';
  if (future) rel = ms <= 0 ? 'passed' : days === 0 ? 'today' : `in ${num(days)} day${days === 1 ? '' : 's'}`;
  else rel = days === 0 ? 'today' : `${num(days)} day${days === 1 ? '' : 's'} ago`;
  return h('time', { datetime: iso, title: iso }, date(iso), h('span', { class: 'muted' }, ` (${rel})`));
}

const shown = (t) => `${t.prefix}…`;

let uid = 0;

/**
 * tokensCard is the card of tokens: {me, tokens} as loaded with TOKENS;
 * owner: one account's tokens (an admin's view of it), or none for the
 * account page (your own; an admin's shows every account's, with a filter).
 * It reloads its list itself after making or revoking a token. idPrefix
 * starts its elements' ids (the form's are PREFIX-name, PREFIX-days).
 */
export function tokensCard({ me, tokens, owner = null, idPrefix = '' }) {
  const p = idPrefix || `tok${++uid}`;
  const everyone = !owner && can('othersTokens'); // the admin's account page
  const forOther = owner && owner !== me.name;
  let list = tokens;
  let whose = ''; // the filter: '' = every account
  let activeOnly = false;

  const status_ = h('p', { class: 'form-status tokens-status', id: `${p}-status`, role: 'status', tabindex: '-1' });
  const say = (text, { error = false } = {}) => {
    status_.className = `form-status tokens-status${error ? ' error-inline' : ' ok'}`;
    status_.setAttribute('role', error ? 'alert' : 'status');
    status_.textContent = text;
  };
  const tableSlot = h('div', { class: 'tokens-table' });
  const panelSlot = h('div', { class: 'new-token-slot' });

  const inScope = () => (owner ? list.filter((t) => t.user?.name === owner) : everyone ? list : list.filter((t) => t.user?.name === me.name));

  // The filter, for an admin's list of every account's tokens.
  const whoseSelect = everyone ? h('select', { id: `${p}-whose`, class: 'tokens-whose' }) : null;
  const activeBox = h('input', { type: 'checkbox', id: `${p}-active`, class: 'tokens-active' });
  whoseSelect?.addEventListener('change', () => { whose = whoseSelect.value; draw(); });
  activeBox.addEventListener('change', () => { activeOnly = activeBox.checked; draw(); });
  const filters = h('div', { class: 'controls tokens-filters' },
    everyone ? h('label', { for: whoseSelect.id }, 'Account ', whoseSelect) : null,
    h('label', { class: 'check', for: activeBox.id }, activeBox, ' Active only'));

  function fillWhose() {
    if (!whoseSelect) return;
    const names = [...new Set(list.map((t) => t.user?.name).filter(Boolean))].sort();
    if (whose && !names.includes(whose)) names.push(whose);
    whoseSelect.replaceChildren(h('option', { value: '' }, 'every account'),
      ...names.map((n) => h('option', { value: n, selected: n === whose }, n === me.name ? `${n} (you)` : n)));
  }

  function draw() {
    fillWhose();
    const all = inScope();
    const rows = all.filter((t) => (!whose || t.user?.name === whose) && (!activeOnly || status(t) === 'active'));
    const counts = { active: 0, expired: 0, revoked: 0 };
    for (const t of all) counts[status(t)]++;
    const summary = `${num(all.length)} token${all.length === 1 ? '' : 's'}, newest first: ${['active', 'expired', 'revoked'].map((s) => `${num(counts[s])} ${s}`).join(', ')}`;
    if (!rows.length) {
      tableSlot.replaceChildren(h('p', { class: 'empty' }, all.length
        ? 'No token matches the filter.'
        : forOther ? `${owner} has no token yet: make one below.` : 'No token yet: make one below.'));
      return;
    }
    const showOwner = everyone;
    tableSlot.replaceChildren(h('div', { class: 'table-wrap' }, h('table', { class: 'compact tokens' },
      h('caption', {}, `${summary}.${rows.length < all.length ? ` Showing ${num(rows.length)}.` : ''}`),
      h('thead', {}, h('tr', {}, ['Name', 'Token', showOwner ? 'Account' : null, 'Created', 'Expires', 'Last used', 'Status', h('span', { class: 'visually-hidden' }, 'Actions')]
        .filter(Boolean).map((l) => h('th', { scope: 'col' }, l)))),
      h('tbody', {}, rows.map((t) => row(t, showOwner))))));
  }

  function row(t, showOwner) {
    const st = status(t);
    const current = t.current;
    const label = t.name || h('span', { class: 'muted' }, '(no name)');
    const revoke = st === 'active' && can('revokeToken')
      ? h('button', {
        type: 'button', class: 'revoke', 'data-token': t.id,
        'aria-label': `Revoke ${t.name ? `token “${t.name}”` : 'token'} ${shown(t)}${showOwner || forOther ? ` of ${t.user?.name}` : ''}`,
        onclick: (e) => revokeToken(t, e.currentTarget),
      }, 'Revoke…')
      : null;
    return h('tr', { 'data-token': t.id, 'data-status': st, 'data-user': t.user?.name, 'data-current': current ? 'true' : undefined },
      h('th', { scope: 'row', class: 'token-name' }, label),
      h('td', { class: 'prefix' }, h('code', {}, shown(t))),
      showOwner ? h('td', { class: 'owner' }, t.user?.name === me.name ? h('span', {}, t.user.name, h('span', { class: 'muted' }, ' (you)')) : t.user?.name) : null,
      h('td', { class: 'created' }, when(t.createdAt)),
      h('td', { class: 'expires' }, t.expiresAt ? when(t.expiresAt, { future: true }) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'last-used' }, t.lastUsedAt ? when(t.lastUsedAt) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'status-cell' },
        h('span', { class: `token-status t-${st}`, title: st === 'revoked' ? `revoked ${t.revokedAt}` : st === 'expired' ? `expired ${t.expiresAt}` : 'works until it expires or is revoked' }, st),
        current ? h('span', { class: 'tag this-browser', title: 'This browser is signed in with this token' }, 'this browser') : null,
        st === 'active' && t.user?.disabled ? h('span', { class: 'tag disabled-tag', title: 'Refused while its account is disabled' }, 'account disabled') : null),
      h('td', { class: 'row-actions' }, revoke));
  }

  async function reload() {
    list = (await gql(TOKENS)).tokens;
    draw();
  }

  async function revokeToken(t, button) {
    const current = t.current;
    const whose_ = t.user?.name && t.user.name !== me.name ? ` of ${t.user.name}` : '';
    const ok = await confirmDialog({
      title: current ? 'Revoke the token you are signed in with?' : 'Revoke this token?',
      body: [
        h('p', {}, 'Token ', h('code', {}, shown(t)), t.name ? ` (“${t.name}”)` : '', whose_,
          ' is refused from now on, wherever it is used. This cannot be undone: a new token would have to be made.'),
        current ? h('p', { class: 'warn' }, h('strong', {}, 'This browser is signed in with it: '), 'you will be signed out here, and need another token to sign in again.') : null,
      ],
      confirm: current ? 'Revoke and sign out' : 'Revoke',
      danger: true,
    });
    if (!ok) {
      button.focus();
      return;
    }
    say(`Revoking ${shown(t)}…`);
    try {
      await gql(REVOKE, { id: t.id });
    } catch (err) {
      say(`Could not revoke ${shown(t)}: ${errorText(err)}`, { error: true });
      status_.focus();
      return;
    }
    if (current) {
      window.dispatchEvent(new CustomEvent('deidcorpus:sign-out', {
        detail: { notice: `You revoked the token this browser was signed in with (${shown(t)}), so this browser is signed out. Sign in with another token.` },
      }));
      return;
    }
    try {
      await reload();
      say(`Token ${shown(t)}${whose_} revoked: it is refused from now on.`);
    } catch (err) {
      say(`Token ${shown(t)} was revoked, but the list could not be reloaded: ${errorText(err)}`, { error: true });
    }
    status_.focus();
  }

  // Making a token: a name, a lifetime; the secret is shown once.
  const name = h('input', { id: `${p}-name`, name: 'name', autocomplete: 'off', maxlength: 200, placeholder: 'e.g. laptop, notebook, CI', 'aria-describedby': `${p}-name-hint` });
  const days = h('input', {
    id: `${p}-days`, name: 'expiresInDays', type: 'number', min: 0, max: MAX_DAYS, step: 1, value: DEFAULT_DAYS,
    inputmode: 'numeric', 'aria-describedby': `${p}-days-hint`,
  });
  const submit = h('button', { type: 'submit' }, forOther ? `Make a token for ${owner}` : 'Make a token');
  const formStatus = h('p', { class: 'form-status', role: 'status', id: `${p}-form-status`, tabindex: '-1' });
  const fail = (text) => {
    formStatus.className = 'form-status error-inline';
    formStatus.setAttribute('role', 'alert');
    formStatus.textContent = text;
  };
  const form = h('form', {
    class: 'run-form new-token-form', id: `${p}-form`, novalidate: true,
    'aria-label': forOther ? `Make an API token for ${owner}` : 'Make an API token',
    onsubmit: async (e) => {
      e.preventDefault();
      formStatus.className = 'form-status';
      formStatus.setAttribute('role', 'status');
      // The server judges the lifetime; what it cannot be sent (not a
      // whole number) or would get wrong (too long) is caught here.
      const raw = days.value.trim();
      const n = Number(raw);
      if (raw === '' || !Number.isInteger(n) || n > MAX_DAYS) {
        fail(`Expires in: a whole number of days up to ${num(MAX_DAYS)}, or 0 for a token that never expires.`);
        days.focus();
        return;
      }
      submit.disabled = true;
      formStatus.textContent = 'Making the token…';
      try {
        const { createToken: made } = await gql(CREATE, { user: owner || null, name: name.value.trim(), days: n });
        formStatus.textContent = '';
        name.value = '';
        showOnce(made);
        await reload().catch((err) => say(`The token was made, but the list could not be reloaded: ${errorText(err)}`, { error: true }));
      } catch (err) {
        fail(`Could not make the token: ${errorText(err)}`);
        formStatus.focus();
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('div', { class: 'fields' },
    h('div', { class: 'field' }, h('label', { for: name.id }, 'Name'), name,
      h('small', { class: 'muted', id: `${p}-name-hint` }, 'What it is for, to recognize it later (optional).')),
    h('div', { class: 'field' }, h('label', { for: days.id }, 'Expires in (days)'), days,
      h('small', { class: 'muted', id: `${p}-days-hint` }, `${DEFAULT_DAYS} unless you say otherwise; 0: never expires.`))),
  h('div', { class: 'form-actions' }, submit, formStatus));

  // The new token, shown this once: copy it now.
  function showOnce(made) {
    const who = made.info.user?.name || owner || me.name;
    const pid = `${p}-new`;
    const value = h('input', { id: `${pid}-value`, class: 'new-token-value', readonly: true, value: made.token, spellcheck: 'false', autocomplete: 'off', size: 64, 'aria-describedby': `${pid}-warning` });
    const copied = h('span', { class: 'copy-status', role: 'status', id: `${pid}-copied` });
    const copy = h('button', {
      type: 'button', class: 'copy-token', id: `${pid}-copy`,
      onclick: async () => {
        copied.className = 'copy-status';
        try {
          if (navigator.clipboard?.writeText) await navigator.clipboard.writeText(value.value);
          else {
            value.select();
            if (!document.execCommand('copy')) throw new Error('the browser refused');
          }
          copied.className = 'copy-status ok';
          copied.textContent = 'Copied to the clipboard.';
        } catch {
          value.focus();
          value.select();
          copied.className = 'copy-status error-inline';
          copied.textContent = 'The browser would not copy it: it is selected, press Ctrl+C (⌘C).';
        }
      },
    }, 'Copy');
    const panel = h('section', { class: 'new-token', 'data-owner': who, 'data-token': made.info.id, 'aria-labelledby': `${pid}-title` },
      h('h3', { id: `${pid}-title` }, who === me.name ? 'Your new token' : `New token for ${who}`, ' ', h('code', { class: 'muted' }, shown(made.info))),
      h('p', { class: 'warn', id: `${pid}-warning` },
        h('strong', {}, 'Copy it now: it will not be shown again. '),
        'Only its hash is kept, so nobody can read it later, an admin included. If it is lost, revoke it and make another.'),
      h('div', { class: 'token-copy' },
        h('label', { for: value.id, class: 'visually-hidden' }, 'The new token'), value, copy, copied),
      h('p', { class: 'muted' }, who === me.name
        ? 'Send it as “Authorization: Bearer …”, or paste it in the sign-in form of another browser.'
        : `Hand it to ${who} by a safe channel: it signs in to this dashboard (paste it in the sign-in form) and the API as “Authorization: Bearer …”.`,
      ` It expires ${made.info.expiresAt ? `on ${date(made.info.expiresAt)}` : 'never'}.`),
      h('p', {}, h('button', {
        type: 'button', class: 'hide-token', id: `${pid}-hide`,
        onclick: () => {
          panel.remove();
          name.focus();
        },
      }, 'I have copied it: hide it')));
    panelSlot.replaceChildren(panel);
    value.focus();
    value.select();
  }

  draw();
  const canCreate = can('createToken') && (!forOther || can('othersTokens'));
  return card(forOther ? `Tokens of ${owner}` : everyone ? 'API tokens (every account’s)' : 'Your API tokens',
    h('p', { class: 'muted' }, everyone
      ? 'As an admin you see every account’s tokens and may revoke any. A token is shown once, when it is made; here only its first characters.'
      : 'A token is shown once, when it is made; here only its first characters. Revoke one that is lost or no longer needed.'),
    filters, tableSlot, status_,
    canCreate ? h('h3', { class: 'form-title' }, forOther ? `Make a token for ${owner}` : 'Make a token') : null,
    canCreate ? form : null,
    panelSlot);
}

/** loadTokens is the list tokensCard takes. */
export async function loadTokens(signal) {
  return (await gql(TOKENS, {}, { signal })).tokens;
}
