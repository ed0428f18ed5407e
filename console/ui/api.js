// The console API client. Paths are relative to /console/api/.

export class APIError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field || '';
  }
}

let csrf = '';
let onLoggedOut = () => {};

// session sets the CSRF token every state-changing call sends, and what
// to do when the server says the session is gone.
export function session(token, loggedOut) {
  csrf = token;
  if (loggedOut) onLoggedOut = loggedOut;
}

// request sends a call and returns the raw Response (for streaming).
export function request(method, path, body, extraHeaders) {
  const headers = { ...extraHeaders };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  const init = { method, headers, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  return fetch(`api/${path}`, init);
}

// errorOf reads the error of a failed response: the console's own shape
// and the three gateway styles all keep a message at error.message. A 401
// means the session ended, except on the login call itself.
export async function errorOf(res, path) {
  let data = null;
  try { data = await res.json(); } catch { /* not JSON */ }
  const e = (data && data.error) || {};
  if (res.status === 401 && path !== 'login') onLoggedOut();
  return new APIError(res.status, e.message || `${res.status} ${res.statusText}`, e.field);
}

// api sends a JSON call and returns the decoded reply.
export async function api(method, path, body) {
  const res = await request(method, path, body);
  if (!res.ok) throw await errorOf(res, path);
  return res.json();
}
