import { GatewayError } from '../errors/gateway-error.js';

type Headers = Record<string, string | string[] | undefined>;

/** The header a browser page must add to a state-changing request signed in by its cookie. */
export const csrfHeader = 'x-svc-csrf';

/**
 * CSRF defence in depth behind the SameSite=Strict session cookie: a state-changing request that
 * relies on a cookie (no Authorization header) must carry a custom header, which another site can
 * only send after a CORS preflight, and CORS never admits credentials (cors.ts). The admin API and
 * the model API (a person's chat page signs its model requests with the same cookie) both ask it.
 */
export function checkCsrf(method: string, headers: Headers): void {
  if (method === 'GET' || headers.authorization !== undefined || headers.cookie === undefined) return;
  if (headers[csrfHeader] === undefined) {
    throw new GatewayError('forbidden', `A request signed in by the session cookie must send the ${csrfHeader} header (the web UI does); API clients send their token as a bearer token.`);
  }
}
