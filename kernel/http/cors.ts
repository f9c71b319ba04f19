import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Response headers a browser script may read: the spec's x-svc-* headers, the retry hints and the
 * request id under the name the OpenAI SDKs read. Listed, because `*` is ignored by browsers on
 * requests that carry credentials.
 */
const exposed = [
  'x-svc-request-id',
  'x-request-id',
  'x-svc-model',
  'x-svc-routing-rule',
  'x-svc-route',
  'x-svc-routing-reason',
  'x-svc-routing-confidence',
  'x-svc-fallback-from',
  'x-svc-fallback-scope',
  'x-should-retry',
  'retry-after',
  'retry-after-ms',
].join(', ');

const methods = 'GET, POST, PUT, PATCH, DELETE';
/** Browsers cache a preflight answer this long (seconds); Chromium caps it at 7200. */
const preflightMaxAge = '600';

/**
 * CORS for an operator's allow-list of origins (`server.corsOrigins`, default empty: no origin is
 * allowed and no CORS header is ever sent). Credentials (cookies) are never allowed cross-origin;
 * browser clients send their key in `Authorization`, which a preflight allows.
 */
export class Cors {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    // Origins compare as the browser sends them: scheme://host[:port], lower case, no trailing slash.
    this.origins = new Set(origins.map((o) => o.toLowerCase().replace(/\/+$/, '')));
  }

  private allowed(origin: string | undefined): origin is string {
    return origin !== undefined && (this.any || this.origins.has(origin.toLowerCase()));
  }

  /**
   * Adds the CORS headers an allowed origin gets; answers a preflight (true: the request is done).
   * A request from an origin not on the list gets no CORS header, so the browser withholds the reply.
   */
  apply(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.origins.size === 0 && !this.any) return false;
    const origin = req.headers.origin;
    res.setHeader('vary', 'Origin');
    if (!this.allowed(origin)) return false;
    res.setHeader('access-control-allow-origin', origin);
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      res.setHeader('access-control-expose-headers', exposed);
      return false;
    }
    res.setHeader('access-control-allow-methods', methods);
    // Whatever headers the script asked for (the SDKs add their own x-stainless-* ones); the key
    // check and the routes decide what a request may do, not this list.
    const asked = req.headers['access-control-request-headers'];
    if (asked) res.setHeader('access-control-allow-headers', asked);
    res.setHeader('access-control-max-age', preflightMaxAge);
    res.setHeader('vary', 'Origin, Access-Control-Request-Headers');
    res.statusCode = 204;
    res.end();
    return true;
  }
}
