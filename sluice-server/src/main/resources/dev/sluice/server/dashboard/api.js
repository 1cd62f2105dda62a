// The HTTP/JSON API v1 client of the dashboard: same origin, bearer token from sessionStorage when one is set.

const TOKEN_KEY = 'sluice.token';
let memoryToken = '';

/** An error answer of the API ({"error":{code,name,problem,retryable,fix}}) or a network failure. */
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.problem || (status ? 'HTTP ' + status : 'the server did not answer'));
    this.status = status;
    this.code = e.code || null;
    this.name = e.name || (status ? 'HTTP_' + status : 'NETWORK');
    this.problem = e.problem || this.message;
    this.fix = e.fix || null;
    this.retryable = !!e.retryable;
  }
}

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (e) {
    return '';
  }
}

export function setToken(value) {
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (e) {
    // storage refused (private mode): the token lasts for this page only
  }
  memoryToken = value || '';
}

/** A path of the API from segments, each encoded: path('streams', name, 'groups'). */
export function path(...segments) {
  return '/api/v1/' + segments.map((x) => encodeURIComponent(String(x))).join('/');
}

/** GET (or another method with a JSON body); resolves to the parsed JSON, rejects with an ApiError. */
export async function call(url, opts = {}) {
  const headers = {'Accept': 'application/json'};
  const t = token() || memoryToken;
  if (t) headers['Authorization'] = 'Bearer ' + t;
  let body;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await fetch(url, {method: opts.method || 'GET', headers, body, cache: 'no-store', credentials: 'omit'});
  } catch (e) {
    throw new ApiError(0, null);
  }
  if (res.status === 204) return null;
  let doc = null;
  try {
    doc = await res.json();
  } catch (e) {
    doc = null;
  }
  if (!res.ok) throw new ApiError(res.status, doc);
  return doc;
}

export const get = (url) => call(url);
export const post = (url, body) => call(url, {method: 'POST', body: body === undefined ? {} : body});

/** A URL with query parameters (null and empty values left out). */
export function query(url, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? url + '?' + s : url;
}
