// The dashboard's shell: signing in, hash routing, the navigation and the
// account in the header, loading and error states. Pages live in pages/, one
// module each, listed in routes.js; what a role may use is roles.js's call.

import { routes, match } from './routes.js';
import { ApiError, TOKEN_KEY, token } from './api.js';
import { account, adoptTokenFromURL, load, reset, signIn, signOut } from './session.js';
import { can, refusal, seesAllCorpora } from './roles.js';
import { h } from './dom.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const accountBox = document.getElementById('account');
let api = null; // the server's root fields, once signed in ({query, mutation, subscription} sets)
let notice = ''; // said once on the sign-in view (e.g. after signing out)

// has tells whether the API offers what a route requires: 'jobs' (a Query
// field), 'mutation:startTagging', 'subscription:job', or a list of them.
const has = (req) => [].concat(req).every((r) => {
  const [kind, name] = r.includes(':') ? r.split(':') : ['query', r];
  return Boolean(api?.[kind]?.has(name));
});
let current = null; // {controller, path}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs = ''] = raw.split('?');
  return { path, query: Object.fromEntries(new URLSearchParams(qs)) };
}

function drawNav(path) {
  const items = api ? routes.filter((r) => r.nav && (!r.requires || has(r.requires)) && can(r.allow)) : [];
  nav.replaceChildren(...items.map((r) => {
    const active = r.path === '' ? path === '' || path.startsWith('corpus/') : path === r.path || path.startsWith(r.path + '/');
    return h('li', {}, h('a', { href: '#/' + r.path, 'aria-current': active ? 'page' : undefined }, r.nav));
  }));
}

function drawAccount(me) {
  if (!me) {
    accountBox.replaceChildren();
    return;
  }
  accountBox.replaceChildren(
    h('a', { href: '#/settings', class: 'who', title: 'Your account and API token' },
      h('span', { class: 'who-name' }, me.name), ' ', h('span', { class: 'role-badge', 'data-role': me.role }, me.role)),
    h('button', { type: 'button', id: 'sign-out', class: 'sign-out', onclick: doSignOut }, 'Sign out'));
}

// A page may say why it signs out (a 'deidcorpus:sign-out' event whose
// detail is {notice}: the token was just revoked); a click says nothing.
function doSignOut(e) {
  signOut();
  const said = e instanceof CustomEvent && typeof e.detail?.notice === 'string' ? e.detail.notice : '';
  notice = said || 'Signed out: this browser no longer keeps the token. The token itself still works until it expires or is revoked (Account › API tokens, or deidcorpus tokens revoke ID).';
  render();
}

/** errorView is what a failed page shows instead of a blank. */
export function errorView(err, retry) {
  const notFound = err instanceof ApiError && err.code === 'not_found';
  const denied = err instanceof ApiError && (err.status === 403 || err.code === 'forbidden');
  const title = notFound ? 'Not found' : denied ? 'Not allowed' : 'Something went wrong';
  return h('div', { class: 'error', role: 'alert', 'data-code': err?.code || undefined },
    h('h1', {}, title),
    h('p', { class: 'error-message' }, err?.message || String(err)),
    denied ? h('p', {}, 'Your role does not reach this. Another account’s token can be used from ', h('a', { href: '#/settings' }, 'Settings'), '.') : null,
    notFound && account() && !seesAllCorpora()
      ? h('p', { class: 'muted' }, 'Your role sees only some corpora (', h('a', { href: '#/settings' }, 'Account'), ' says which): what it may not see is not found either.')
      : null,
    h('p', {},
      retry && !notFound && !denied ? h('button', { type: 'button', onclick: retry }, 'Try again') : null, ' ',
      h('a', { href: '#/' }, 'All corpora')));
}

/** signInView asks for an API token and says where one comes from. */
function signInView(refused) {
  const input = h('input', {
    id: 'signin-token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, size: 60, placeholder: 'dct_…', 'aria-describedby': 'signin-help',
  });
  const status = h('p', { id: 'signin-status', class: 'form-status', role: 'status' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', {
    class: 'stack signin-form', id: 'signin-form',
    onsubmit: async (e) => {
      e.preventDefault();
      submit.disabled = true;
      status.className = 'form-status';
      status.textContent = 'Checking the token…';
      try {
        await signIn(input.value);
        render();
      } catch (err) {
        status.className = 'form-status error-inline';
        status.setAttribute('role', 'alert');
        status.textContent = err instanceof ApiError && err.unauthorized
          ? `The server refused this token: ${err.message}`
          : err.message;
        input.focus();
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('label', { for: 'signin-token' }, 'API token'),
  input,
  h('div', {}, submit),
  status);
  const reason = notice || (refused ? `The server refused the stored token: ${refused}` : '');
  const view = h('div', { class: 'page signin' },
    h('h1', {}, 'Sign in'),
    reason ? h('p', { class: notice ? 'note-ok' : 'warn', role: notice ? 'status' : 'alert', id: 'signin-reason' }, reason) : null,
    h('section', { class: 'card' },
      h('p', {}, 'deidcorpus holds clinical notes: every request needs the API token of an account. Paste yours to sign in.'),
      form,
      h('p', { class: 'muted' }, 'The token is kept in this browser only (localStorage) and sent as “Authorization: Bearer …” with every request; the GraphQL IDE uses it too.')),
    h('section', { class: 'card', id: 'signin-help' },
      h('h2', {}, 'Where to find a token'),
      h('ul', { class: 'hints' },
        h('li', {}, 'The first start of the server made the account ', h('code', {}, 'admin'), ' and wrote its token to a file beside the database: ',
          h('code', {}, 'DB.admin-token'), ' (with the default database, ', h('code', {}, './deidcorpus.db.admin-token'), ').'),
        h('li', {}, h('code', {}, 'deidcorpus serve --demo'), ' prints a link that signs you in: ', h('code', {}, 'http://…/#token=dct_…'), '.'),
        h('li', {}, 'An admin makes accounts and their tokens on the dashboard’s Accounts page; everyone makes more tokens of their own on the Account page.'),
        h('li', {}, 'Or with the command line: ', h('code', {}, 'deidcorpus users add NAME --role researcher'), ', then ',
          h('code', {}, 'deidcorpus tokens create --user NAME'), ' (prints the token once; add ', h('code', {}, '--db DB'), ' for another database).'))));
  notice = '';
  setTimeout(() => input.focus(), 0);
  return view;
}

async function render() {
  adoptTokenFromURL(); // a sign-in link opened in this tab
  const { path, query } = parseHash();
  const samePage = current && current.path === path;
  const focusedId = samePage ? document.activeElement?.id : null;
  current?.controller.abort();
  const controller = new AbortController();
  current = { controller, path };
  drawNav(path);

  // Show "Loading…" only if the page takes a moment, to avoid a flash.
  const loading = setTimeout(() => {
    if (current?.controller === controller) main.setAttribute('aria-busy', 'true');
    if (!samePage && current?.controller === controller) main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
  }, 150);
  let view;
  let routePath = 'error';
  try {
    const session = await load();
    api = session.api;
    drawAccount(session.me);
    drawNav(path);
    const found = match(path, has);
    if (!found) throw new ApiError(`There is no page at #/${path}.`, { errors: [{ extensions: { code: 'not_found' } }] });
    if (!can(found.route.allow)) {
      const message = refusal(found.route.allow, session.me.name);
      throw new ApiError(message, { status: 403, errors: [{ message, extensions: { code: 'forbidden' } }] });
    }
    const mod = await found.route.page();
    routePath = found.route.path || 'home';
    view = await mod.render({
      params: found.params,
      query,
      signal: controller.signal,
      title: (t) => { document.title = t ? `${t} · deidcorpus` : 'deidcorpus'; },
    });
  } catch (err) {
    if (controller.signal.aborted) return;
    if (err instanceof ApiError && err.unauthorized) {
      // No token, or one the server refuses (expired, revoked): it is of no
      // more use, so it is forgotten and the reason shown.
      const refused = token() ? err.message : '';
      if (refused) signOut();
      api = null;
      drawNav(path);
      drawAccount(null);
      view = signInView(refused);
      routePath = 'signin';
      document.title = 'Sign in · deidcorpus';
    } else {
      console.warn('page failed:', err);
      view = errorView(err, render);
      routePath = 'error';
      document.title = 'Error · deidcorpus';
    }
  } finally {
    clearTimeout(loading);
  }
  if (controller.signal.aborted) return;
  main.removeAttribute('aria-busy');
  main.replaceChildren(view);
  if (samePage) {
    if (focusedId) document.getElementById(focusedId)?.focus();
  } else {
    window.scrollTo(0, 0);
    if (document.activeElement && document.activeElement !== document.body) main.focus({ preventScroll: true });
  }
  // For tests and styles: which page is showing, and that it has rendered.
  main.dataset.route = routePath;
  main.dataset.ready = String(Date.now());
}

window.addEventListener('hashchange', render);
// Signing in or out in another tab (or in Settings here) changes who this
// tab acts for: start again as that account.
window.addEventListener('storage', (e) => {
  if (e.key === TOKEN_KEY || e.key === null) {
    reset();
    render();
  }
});
window.addEventListener('deidcorpus:session', () => render());
window.addEventListener('deidcorpus:sign-out', doSignOut);
render();
