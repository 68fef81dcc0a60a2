// The dashboard's shell: hash routing, the navigation, loading and error
// states. Pages live in pages/, one module each, listed in routes.js.

import { routes, match } from './routes.js';
import { schema, ApiError } from './api.js';
import { h } from './dom.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let api = null; // the server's root fields, once known ({query, mutation, subscription} sets)

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
  const items = routes.filter((r) => r.nav && (!r.requires || has(r.requires)));
  nav.replaceChildren(...items.map((r) => {
    const active = r.path === '' ? path === '' || path.startsWith('corpus/') : path === r.path || path.startsWith(r.path + '/');
    return h('li', {}, h('a', { href: '#/' + r.path, 'aria-current': active ? 'page' : undefined }, r.nav));
  }));
}

/** errorView is what a failed page shows instead of a blank. */
export function errorView(err, retry) {
  const notFound = err instanceof ApiError && err.code === 'not_found';
  const denied = err instanceof ApiError && (err.status === 401 || err.status === 403 || err.code === 'unauthenticated' || err.code === 'forbidden');
  const title = notFound ? 'Not found' : denied ? 'Not allowed' : 'Something went wrong';
  return h('div', { class: 'error', role: 'alert' },
    h('h1', {}, title),
    h('p', { class: 'error-message' }, err?.message || String(err)),
    denied ? h('p', {}, 'Your API token may be missing or expired: see ', h('a', { href: '#/settings' }, 'Settings'), '.') : null,
    h('p', {},
      retry ? h('button', { type: 'button', onclick: retry }, 'Try again') : null, ' ',
      h('a', { href: '#/' }, 'All corpora')));
}

async function render() {
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
    let found = match(path, has);
    if (!found && api === null) {
      // A page behind an API feature: learn the schema, then try again.
      api = await schema().catch(() => ({}));
      drawNav(path);
      found = match(path, has);
    }
    if (!found) throw new ApiError(`There is no page at #/${path}.`, { errors: [{ extensions: { code: 'not_found' } }] });
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
    console.warn('page failed:', err);
    view = errorView(err, render);
    routePath = 'error';
    document.title = 'Error · deidcorpus';
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
render();
schema().then((s) => {
  api = s;
  drawNav(parseHash().path);
}, () => {});
