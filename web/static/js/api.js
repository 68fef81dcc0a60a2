// The dashboard's only way to the server: GraphQL over fetch POST,
// subscriptions over the graphql-transport-ws websocket protocol, both at
// /graphql, and downloads (/download/...) fetched and saved from a blob.
// Every request carries the API token kept in localStorage (session.js signs
// in and out): as an Authorization header, or in the websocket's
// connection_init payload, since a browser cannot set headers on a socket.

export const TOKEN_KEY = 'deidcorpus.token';

let schemaPromise; // schema(), once per token

/** ApiError is what every failed request becomes: a message fit to show. */
export class ApiError extends Error {
  constructor(message, { status = 0, errors = [], data = null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.errors = errors;
    this.data = data;
  }
  /** The error's GraphQL code (extensions.code) if all errors share one. */
  get code() {
    const codes = new Set(this.errors.map((e) => e.extensions?.code).filter(Boolean));
    return codes.size === 1 ? [...codes][0] : undefined;
  }
  /** True when the server refused the token (missing, unknown, expired, revoked). */
  get unauthorized() {
    return this.status === 401 || this.code === 'unauthorized';
  }
}

/** unauthorized is the error of a request that cannot be made: no token. */
export function unauthorized(message) {
  return new ApiError(message, { status: 401, errors: [{ message, extensions: { code: 'unauthorized' } }] });
}

/** notFound is the error of a page whose object does not exist. */
export function notFound(message) {
  return new ApiError(message, { errors: [{ message, extensions: { code: 'not_found' } }] });
}

export function token() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(t) {
  if (t) localStorage.setItem(TOKEN_KEY, t);
  else localStorage.removeItem(TOKEN_KEY);
  schemaPromise = undefined; // what the schema shows may depend on who asks
}

function authHeaders(t = token()) {
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/**
 * gql runs one query or mutation and returns its data. Any GraphQL error
 * rejects with an ApiError, unless partial is set: then the result is
 * {data, errors} and the caller decides. as sends another token than the
 * stored one (to try a token before keeping it).
 */
export async function gql(query, variables = {}, { signal, partial = false, as, files } = {}) {
  let res;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { ...(files ? {} : { 'Content-Type': 'application/json' }), Accept: 'application/json', ...authHeaders(as ?? token()) },
      body: files ? multipart(query, variables, files) : JSON.stringify({ query, variables }),
      signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(`Cannot reach the server (${e.message}). Is deidcorpus still running?`);
  }
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The server answered ${res.status} ${res.statusText} instead of a GraphQL result.`, { status: res.status });
  }
  const errors = body.errors || [];
  if (res.status === 401 && !errors.length) errors.push({ message: 'The server refused the API token.', extensions: { code: 'unauthorized' } });
  if (partial && body.data) return { data: body.data, errors };
  if (errors.length) {
    const msg = [...new Set(errors.map((e) => e.message))].join('; ');
    throw new ApiError(msg, { status: res.status, errors, data: body.data });
  }
  if (!res.ok || !body.data) throw new ApiError(`The server answered ${res.status} ${res.statusText}.`, { status: res.status });
  return body.data;
}

/**
 * multipart is a GraphQL multipart request (the spec gqlgen reads): the
 * operation with variables.files as nulls, the map from each part to its
 * place, and the files; the browser sets the boundary.
 */
function multipart(query, variables, files) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query, variables: { ...variables, files: files.map(() => null) } }));
  form.append('map', JSON.stringify(Object.fromEntries(files.map((_, i) => [String(i), [`variables.files.${i}`]]))));
  files.forEach((f, i) => form.append(String(i), f, f.name));
  return form;
}

/** filenameOf reads the file name of a Content-Disposition header. */
export function filenameOf(disposition) {
  if (!disposition) return '';
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch { /* fall through to the plain name */ }
  }
  const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/.exec(disposition);
  return plain ? (plain[2] ?? plain[1]).trim() : '';
}

/**
 * download fetches a /download/... URL with the token (a plain link would
 * carry none) and saves it under the server's file name through a blob
 * object URL. Resolves to {filename, size}; rejects with an ApiError holding
 * the server's own message ("not_found: no corpus named …").
 */
export async function download(url, { signal } = {}) {
  let res;
  try {
    res = await fetch(url, { headers: authHeaders(), signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(`Cannot reach the server (${e.message}). Is deidcorpus still running?`);
  }
  if (!res.ok) {
    // The server answers "code: message" in plain text.
    const text = (await res.text().catch(() => '')).trim();
    const m = /^([a-z_]+): ([\s\S]*)$/.exec(text);
    const message = m ? m[2] : text || `The server answered ${res.status} ${res.statusText}.`;
    throw new ApiError(message, { status: res.status, errors: [{ message, extensions: { code: m?.[1] } }] });
  }
  const blob = await res.blob();
  const filename = filenameOf(res.headers.get('Content-Disposition')) || decodeURIComponent(new URL(url, location.href).pathname.split('/').pop()) || 'download';
  const objectURL = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = objectURL;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has taken the blob once the click is handled; keep it a
  // while for slow save dialogs.
  setTimeout(() => URL.revokeObjectURL(objectURL), 60_000);
  return { filename, size: blob.size };
}

/**
 * schema tells which root fields the server has, so pages for features that
 * have not landed (or that the user's role may not use) stay hidden.
 * Resolves to {query: Set, mutation: Set, subscription: Set}.
 */
export function schema() {
  schemaPromise ??= gql(`{ __schema {
      queryType { fields { name } }
      mutationType { fields { name } }
      subscriptionType { fields { name } } } }`)
    .then(({ __schema: s }) => ({
      query: new Set((s.queryType?.fields || []).map((f) => f.name)),
      mutation: new Set((s.mutationType?.fields || []).map((f) => f.name)),
      subscription: new Set((s.subscriptionType?.fields || []).map((f) => f.name)),
    }))
    .catch((e) => {
      schemaPromise = undefined;
      throw e;
    });
  return schemaPromise;
}

/**
 * subscribe starts a GraphQL subscription over the graphql-transport-ws
 * protocol and calls next(data) per event, error(ApiError) once on failure,
 * complete() when the server ends it. It returns a function that stops it.
 * One socket per subscription: the dashboard watches a few jobs at most.
 */
export function subscribe(query, variables, { next, error = () => {}, complete = () => {} }) {
  const url = new URL('/graphql', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, 'graphql-transport-ws');
  const id = '1';
  let done = false;
  const finish = (fn, arg) => {
    if (done) return;
    done = true;
    fn(arg);
    if (ws.readyState <= WebSocket.OPEN) ws.close(1000);
  };
  ws.onopen = () => {
    const t = token();
    ws.send(JSON.stringify({ type: 'connection_init', payload: t ? { Authorization: `Bearer ${t}` } : {} }));
  };
  ws.onmessage = (ev) => {
    let msg;
    try {
      msg = JSON.parse(ev.data);
    } catch {
      return;
    }
    switch (msg.type) {
      case 'connection_ack':
        ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
        break;
      case 'ping':
        ws.send(JSON.stringify({ type: 'pong' }));
        break;
      case 'next':
        if (msg.payload?.errors?.length) finish(error, new ApiError(msg.payload.errors.map((e) => e.message).join('; '), { errors: msg.payload.errors }));
        else if (!done) next(msg.payload.data);
        break;
      case 'error':
        finish(error, new ApiError((msg.payload || []).map((e) => e.message).join('; ') || 'subscription failed', { errors: msg.payload || [] }));
        break;
      case 'complete':
        finish(complete);
        break;
    }
  };
  ws.onerror = () => finish(error, new ApiError('The live connection to the server failed.'));
  ws.onclose = (ev) => {
    if (!done) finish(error, new ApiError(`The live connection closed (${ev.code}${ev.reason ? ': ' + ev.reason : ''}).`));
  };
  return () => {
    if (done) return;
    done = true;
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id, type: 'complete' }));
    ws.close(1000);
  };
}
