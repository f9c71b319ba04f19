// The admin API client: same origin, session cookie, and the CSRF header the admin API asks of
// cookie-signed requests (plugins/admin-api/access.ts).

/** An error answer of the admin API: its status and the spec's error fields. */
export class ApiError extends Error {
  constructor(status, body) {
    const e = body?.error ?? {};
    super(e.message ?? `The service answered ${status}.`);
    this.status = status;
    this.code = e.code ?? null;
    this.param = e.param ?? null;
  }
}

/** Sends one request to /admin/v1<path>; an error answer throws ApiError (a 401 also signs out). */
async function send(method, path, body) {
  const headers = { 'x-svc-csrf': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/admin/v1${path}`, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, { error: { message: 'The service could not be reached. Check the connection and try again.' } });
  }
  if (!res.ok) {
    const data = await res.json().catch(() => null);
    // A session that ended elsewhere (sign-out, suspension, expiry): back to the sign-in page.
    if (res.status === 401 && path !== '/sessions') window.dispatchEvent(new Event('svc:signed-out'));
    throw new ApiError(res.status, data);
  }
  return res;
}

/** Calls /admin/v1<path>; resolves to the JSON body (null for 204), throws ApiError otherwise. */
export async function api(method, path, body) {
  const res = await send(method, path, body);
  return res.status === 204 ? null : res.json().catch(() => null);
}

/** Downloads a file answer (GET): its bytes and the file name its Content-Disposition gives. */
export async function download(path, fallbackName) {
  const res = await send('GET', path);
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  return { blob: await res.blob(), name };
}

/** A query string from an object, leaving out empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Path segment encoding (model names hold `:` and `/`). */
export const seg = (s) => encodeURIComponent(s);
