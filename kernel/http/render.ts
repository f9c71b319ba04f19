import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.js';

export const requestIdHeader = 'x-svc-request-id';

/** Writes a JSON body with its length; headers already set on `res` are kept. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.statusCode = status;
  for (const k in headers) res.setHeader(k, headers[k]!);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(payload));
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
