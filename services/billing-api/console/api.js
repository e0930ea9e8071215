// The console's only way to data: the same HTTP API routes customers and scripts use, with
// the signed-in key as the bearer token. The key lives in sessionStorage only (gone when the
// tab closes; never in localStorage, a cookie or a URL).

const SESSION = 'gpubill.session';

/** { token, role: 'customer' | 'admin', account?, key_role? (owner, finance, viewer, member) } or null. */
export function session() {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION) || 'null');
    return s && typeof s.token === 'string' && (s.role === 'customer' || s.role === 'admin') ? s : null;
  } catch {
    return null;
  }
}

export function setSession(s) {
  sessionStorage.setItem(SESSION, JSON.stringify(s));
}

export function clearSession() {
  sessionStorage.removeItem(SESSION);
}

/** An answer other than 2xx: the API's `{"error", "message"}`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code || '';
  }
}

/** `body`, when given, is sent as JSON. */
export async function request(method, path, { token, body } = {}) {
  const bearer = token ?? session()?.token;
  const headers = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (e) {
    throw new ApiError(0, 'network', String(e && e.message ? e.message : e));
  }
  if (!res.ok) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    throw new ApiError(res.status, body?.error, body?.message || res.statusText);
  }
  return res;
}

export async function get(path, opts) {
  return (await request('GET', path, opts)).json();
}

export async function post(path, opts) {
  return (await request('POST', path, opts)).json();
}

/** A change (PUT, POST, PATCH, DELETE) with an optional JSON body: the answer's JSON, or null
 * for a 204. */
export async function send(method, path, body) {
  const res = await request(method, path, { body });
  return res.status === 204 ? null : res.json();
}

/** Links cannot carry the bearer header: fetch with it and save the answer as a file. */
export async function download(path, filename) {
  const res = await request('GET', path);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return blob.size;
}

/**
 * Which principal a token is: `GET /v1/me` answers any token its role, a customer key's
 * account and its name, so a sign-in calls no route the token may not use (issue 24.11). An
 * ingest token is refused here, as the console has no page for it.
 */
export async function whoIs(token) {
  const me = await get('/v1/me', { token });
  if (me.role === 'admin') {
    return { token, role: 'admin', name: me.name };
  }
  if (me.role !== 'customer') {
    throw new ApiError(403, 'ingest_token', `a ${me.role} token has no console`);
  }
  return { token, role: 'customer', account: me.account, name: me.name, key_role: me.key_role };
}
