// #/settings — the signed-in account: name, role and what the role sees, the
// corpora assigned to an annotator; its API tokens (an admin's: every
// account's), made, listed and revoked here; signing in with another token;
// signing out. A token is shown once, when made, and never again.

import { ApiError } from '../api.js';
import { load, signIn } from '../session.js';
import { SCOPE, can } from '../roles.js';
import { h, card } from '../dom.js';
import { tokensCard, loadTokens } from '../tokens.js';

export async function render({ title, signal }) {
  title('Account');
  const { me, api } = await load();
  const withTokens = can('tokens') && api.query.has('tokens');
  const tokens = withTokens ? await loadTokens(signal) : [];
  const assigned = (me.assignedCorpora || []).map((c) => c.name);

  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', size: 60, placeholder: 'dct_…', required: true });
  const status = h('p', { class: 'form-status', role: 'status', id: 'token-status' });
  const form = h('form', {
    class: 'stack', id: 'token-form', onsubmit: async (e) => {
      e.preventDefault();
      status.className = 'form-status';
      status.setAttribute('role', 'status');
      status.textContent = 'Checking the token…';
      try {
        const s = await signIn(input.value);
        input.value = '';
        status.textContent = `Signed in as ${s.me.name} (${s.me.role}).`;
        window.dispatchEvent(new Event('deidcorpus:session'));
      } catch (err) {
        status.className = 'form-status error-inline';
        status.setAttribute('role', 'alert');
        status.textContent = err instanceof ApiError && err.unauthorized
          ? `The server refused this token, so you stay signed in as ${me.name}: ${err.message}`
          : err.message;
      }
    },
  },
  h('label', { for: 'token' }, 'Another API token'),
  input,
  h('p', { class: 'muted' }, 'Checked with the server first, then kept in this browser only (localStorage) and sent as “Authorization: Bearer …” with every request, here and in the GraphQL IDE.'),
  h('div', {}, h('button', { type: 'submit' }, 'Use this token')),
  status);

  return h('div', { class: 'page account-page' },
    h('h1', {}, 'Account'),
    card(null,
      h('dl', { class: 'figures' },
        h('div', {}, h('dt', {}, 'Signed in as'), h('dd', { class: 'account-name' }, me.name)),
        h('div', {}, h('dt', {}, 'Role'), h('dd', { class: 'account-role' }, me.role))),
      h('p', { class: 'scope' }, SCOPE[me.role] || ''),
      me.role === 'annotator'
        ? h('p', { class: 'assigned' }, assigned.length ? `Assigned corpora: ${assigned.join(', ')}.` : 'No corpus is assigned to you yet: ask an admin to assign one.')
        : null,
      h('p', {}, h('button', { type: 'button', id: 'settings-sign-out', onclick: () => window.dispatchEvent(new Event('deidcorpus:sign-out')) }, 'Sign out'),
        ' ', h('span', { class: 'muted' }, 'Forgets the token in this browser; the token itself stays valid until it expires or is revoked.'))),
    withTokens ? tokensCard({ me, tokens, idPrefix: 'my-token' }) : null,
    card('Switch account', form));
}
