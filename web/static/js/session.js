// Who is signed in. The API token comes from a sign-in link (#token=…, which
// `deidcorpus serve --demo` prints), the sign-in form or Settings, and is
// kept in localStorage by api.js; the account behind it (the `me` query) and
// the server's schema are loaded once per token, and the role is handed to
// roles.js, which decides what the pages show.

import { gql, schema, token, setToken, unauthorized } from './api.js';
import { setRole } from './roles.js';

const ME = 'query Me { me { id name role assignedCorpora { name } } }';

let loading = null; // Promise<{me, api}> for the stored token
let me = null;

/**
 * adoptTokenFromURL takes a token from a #token=… link: it is stored, and
 * removed from the address bar at once (replaceState: no history entry) so
 * that it does not linger in history, bookmarks or screenshots.
 * Returns whether the address held one.
 */
export function adoptTokenFromURL() {
  const m = /^#token=([^&]*)/.exec(location.hash);
  if (!m) return false;
  let t = '';
  try {
    t = decodeURIComponent(m[1]).trim();
  } catch { /* a mangled link: sign in by hand */ }
  history.replaceState(history.state, '', `${location.pathname}${location.search}#/`);
  if (t && t !== token()) {
    setToken(t);
    reset();
  }
  return true;
}

/** reset forgets the loaded account (the token changed). */
export function reset() {
  loading = null;
  me = null;
  setRole(null);
}

/**
 * load resolves to the signed-in account and the API's root fields,
 * {me, api: {query, mutation, subscription}}; without a token, or when the
 * server refuses it, it rejects with an unauthorized ApiError.
 */
export function load() {
  if (!token()) return Promise.reject(unauthorized('Sign in with an API token.'));
  loading ??= Promise.all([gql(ME), schema()]).then(([d, api]) => {
    me = d.me;
    setRole(me.role);
    return { me, api };
  }).catch((e) => {
    reset();
    throw e;
  });
  return loading;
}

/** account is the signed-in account once loaded, else null. */
export function account() {
  return me;
}

/**
 * signIn tries a token and keeps it only if the server accepts it (a wrong
 * paste does not sign the current account out). Resolves like load().
 */
export async function signIn(t) {
  t = (t || '').trim().replace(/^Bearer\s+/i, '');
  if (!t) throw unauthorized('Paste an API token first.');
  await gql(ME, {}, { as: t });
  setToken(t);
  reset();
  return load();
}

/** signOut forgets the token in this browser (it stays valid until revoked). */
export function signOut() {
  setToken('');
  reset();
}
