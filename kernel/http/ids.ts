import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

/**
 * Random bytes from a pooled 4 KB buffer refilled from the CSPRNG when used up: one system call
 * per few hundred ids instead of one each (ids are made on every request).
 */
export function randomId(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString(encoding, offset, offset + bytes);
  offset += bytes;
  return id;
}

/** Request ids: short, random, URL-safe; also the trace id users look up under Requests. */
export function newRequestId(): string {
  return 'req_' + randomId(12, 'base64url');
}

/**
 * The headers naming a request: the spec's x-svc-request-id, and x-request-id, which the OpenAI
 * SDKs read into `request_id` (and most proxies log).
 */
export function requestIdHeaders(id: string): { 'x-svc-request-id': string; 'x-request-id': string } {
  return { 'x-svc-request-id': id, 'x-request-id': id };
}
