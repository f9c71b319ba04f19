import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

/** Refills the pool when fewer than `bytes` are left; returns where the caller's bytes start. */
function take(bytes: number): number {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = offset;
  offset += bytes;
  return at;
}

/**
 * Random bytes from a pooled 4 KB buffer refilled from the CSPRNG when used up: one system call
 * per few hundred ids instead of one each (ids are made on every request).
 */
export function randomId(bytes: number, encoding: 'hex' | 'base64url'): string {
  const at = take(bytes);
  return pool.toString(encoding, at, at + bytes);
}

/**
 * The time now as 9 characters that sort as the time does (base 32, digits then a–v, as ASCII
 * sorts them; 9 places last until the year 3084).
 */
function timePrefix(now: number): string {
  return now.toString(32).padStart(9, '0');
}

let lastMs = -1;
let inMs = 0;

/**
 * Two characters (same alphabet as the time) that count the ids made in one millisecond, so ids
 * of one process sort in the order they were made: an audit entry, a conversation's messages and
 * a tool loop's calls are listed by id after the time, and random characters would order the ones
 * made in the same millisecond at random.
 */
function sequence(now: number): string {
  if (now === lastMs) inMs++;
  else {
    lastMs = now;
    inMs = 0;
  }
  return (inMs & 1023).toString(32).padStart(2, '0');
}

/**
 * `prefix` + the time (sortable) + a count within the millisecond + `bytes` random bytes less
 * their first two characters (the length is that of the time and the bytes). Ids that are primary
 * keys of tables written on every request (usage records, spans, conversation messages, tool
 * calls) are made like this so that new rows go to the end of the index instead of a random page
 * of it: SQLite and PostgreSQL then write the same few pages per commit whatever the table's size
 * (random keys cost ~3.7× the writer's time per request at 200,000 rows; docs/decisions.md
 * "Time-ordered ids").
 */
export function orderedId(prefix: string, bytes = 9, now = Date.now()): string {
  return prefix + timePrefix(now) + sequence(now) + randomId(bytes, 'base64url').slice(2);
}

const hex = (at: number, n: number): string => pool.toString('hex', at, at + n);

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits, in the usual 8-4-4-4-12
 * form; it sorts by time like `orderedId` (budget hold ids, primary keys of budget_holds).
 */
export function orderedUuid(now = Date.now()): string {
  const at = take(10);
  const ms = now.toString(16).padStart(12, '0').slice(-12);
  pool[at] = (pool[at]! & 0x0f) | 0x70; // version 7
  pool[at + 2] = (pool[at + 2]! & 0x3f) | 0x80; // variant 10
  return `${ms.slice(0, 8)}-${ms.slice(8)}-${hex(at, 2)}-${hex(at + 2, 2)}-${hex(at + 4, 6)}`;
}

/**
 * Request ids: `req_`, the time (so usage records and spans, keyed by it, are appended in order),
 * 72 random bits; URL-safe. Also the trace id users look up under Requests.
 */
export function newRequestId(): string {
  return orderedId('req_');
}

/**
 * The headers naming a request: the spec's x-svc-request-id, and x-request-id, which the OpenAI
 * SDKs read into `request_id` (and most proxies log).
 */
export function requestIdHeaders(id: string): { 'x-svc-request-id': string; 'x-request-id': string } {
  return { 'x-svc-request-id': id, 'x-request-id': id };
}
