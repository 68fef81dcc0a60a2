// #/settings — the API token the dashboard sends (accounts and tokens are
// coming to the API; until then the server ignores it).

import { token, setToken } from '../api.js';
import { h, card } from '../dom.js';

export async function render({ title }) {
  title('Settings');
  const input = h('input', { id: 'token', type: 'password', value: token(), autocomplete: 'off', size: 48 });
  const status = h('p', { role: 'status', class: 'muted' });
  const form = h('form', {
    class: 'stack', onsubmit: (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      status.textContent = input.value.trim() ? 'Saved. Requests now carry this token.' : 'Cleared. Requests carry no token.';
    },
  },
  h('label', { for: 'token' }, 'API token'),
  input,
  h('p', { class: 'muted' }, 'Kept in this browser only (localStorage) and sent as “Authorization: Bearer …” with every request.'),
  h('div', {}, h('button', { type: 'submit' }, 'Save')),
  status);
  return h('div', { class: 'page' }, h('h1', {}, 'Settings'), card(null, form));
}
