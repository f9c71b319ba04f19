import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors/gateway-error.js';
import type { Logger } from '../log/logger.js';
import { newRequestId, requestIdHeaders } from './ids.js';

declare module '../log/events.js' {
  interface LogEvents {
    /** Node refused a request before any route saw it (bad request line, headers too large, …). */
    'http.client_error': { request_id: string; status: number; code: string };
  }
}

/** Node's own choice of status for each parser error it answers itself; anything else is 400. */
function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return 413;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

const messages: Record<number, string> = {
  431: 'The request headers are too large.',
  413: 'The request body is too large.',
  408: 'The request did not arrive in time.',
  400: 'The request is not valid HTTP.',
};

/**
 * The server's `clientError` handler: what Node would answer itself (431, 400, 408), but in the
 * spec's error shape with a request id, so a client or a proxy log can still name the refusal.
 * The code is `invalid_request` (the spec's table has no row for these statuses; docs/decisions.md).
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex, log: Logger): void {
  // A reset peer cannot read anything; a socket already writing a response must not get a second one.
  const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const status = statusOf(err.code);
  const id = newRequestId();
  const body = JSON.stringify(new GatewayError('invalid_request', messages[status]!).toBody());
  const headers: Record<string, string | number> = {
    ...requestIdHeaders(id),
    'x-should-retry': status === 408 ? 'true' : 'false',
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  log.debug('http.client_error', { request_id: id, status, code: err.code ?? 'unknown' });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
}
