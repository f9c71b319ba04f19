import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.js';

export const requestIdHeader = 'x-svc-request-id';

/**
 * Writes a JSON body with its length; headers already set on `res` are kept (those given here
 * win). The head is one flat array handed to writeHead: with nothing set earlier, node writes it
 * as it is instead of copying each header into its map first (response.ts).
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  // Made at its length (a list grown by push gets room for sixteen more, once or twice a reply).
  let n = 4;
  for (const k in headers) if (k !== 'content-type' && k !== 'content-length') n += 2;
  const head = new Array<string>(n);
  let at = 0;
  for (const k in headers) {
    if (k === 'content-type' || k === 'content-length') continue;
    head[at++] = k;
    head[at++] = headers[k]!;
  }
  head[at++] = 'content-type';
  head[at++] = 'application/json';
  head[at++] = 'content-length';
  head[at] = String(Buffer.byteLength(payload));
  // `connection: close` stays readable with getHeader (the front's discardRest asks for it).
  if (headers.connection !== undefined) res.setHeader('connection', headers.connection);
  res.writeHead(status, head);
  res.end(payload);
}

/**
 * The one place an error becomes a response: `{error:{message,type,param,code[,svc]}}` with the
 * error's status and headers and `x-svc-request-id` (set by the kernel on every response).
 * `x-should-retry` carries the Retry column of SPEC.md "Errors" (the OpenAI SDKs and others obey
 * it before their own status rules); an error's own headers may override it.
 * If headers were already sent (a stream), the caller writes an error event instead.
 */
export function renderError(res: ServerResponse, err: GatewayError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, err.status, err.toBody(), { 'x-should-retry': String(err.retryable), ...headers, ...err.headers });
}
