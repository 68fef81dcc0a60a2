// The dashboard's only way to the server: GraphQL over fetch POST, and
// subscriptions over the graphql-transport-ws websocket protocol, both at
// /graphql. An API token, once accounts exist, is read from localStorage.

export const TOKEN_KEY = 'deidcorpus.token';

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
}

function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/**
 * gql runs one query or mutation and returns its data. Any GraphQL error
 * rejects with an ApiError, unless partial is set: then the result is
 * {data, errors} and the caller decides.
 */
export async function gql(query, variables = {}, { signal, partial = false } = {}) {
  let res;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...authHeaders() },
      body: JSON.stringify({ query, variables }),
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
  if (partial && body.data) return { data: body.data, errors };
  if (errors.length) {
    const msg = [...new Set(errors.map((e) => e.message))].join('; ');
    throw new ApiError(msg, { status: res.status, errors, data: body.data });
  }
  if (!res.ok || !body.data) throw new ApiError(`The server answered ${res.status} ${res.statusText}.`, { status: res.status });
  return body.data;
}

let schemaPromise;

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
