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

let lastMs = -1;
let inMs = 0;

/**
 * How many ids were made before this one in the same millisecond: ids of one process then sort
 * in the order they were made (an audit entry, a conversation's messages and a tool loop's calls
 * are listed by id after the time, and random characters would order the ones made in the same
 * millisecond at random).
 */
function sequence(now: number): number {
  if (now === lastMs) inMs++;
  else {
    lastMs = now;
    inMs = 0;
  }
  return inMs & 1023;
}

/** Ids are written here a character at a time and read out as one string (no piece per part). */
const scratch = Buffer.allocUnsafe(256);
/** Base 32 as ASCII sorts it: digits, then a–v. */
const base32 = Buffer.from('0123456789abcdefghijklmnopqrstuv', 'latin1');
const base64url = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');
const hexDigits = Buffer.from('0123456789abcdef', 'latin1');

/** `digits` base-32 characters of `n` (most significant first) at `at`; returns the end. */
function writeBase32(n: number, digits: number, at: number): number {
  for (let i = digits - 1; i >= 0; i--) {
    scratch[at + i] = base32[n % 32]!;
    n = Math.floor(n / 32);
  }
  return at + digits;
}

/** The base64url text (no padding) of pool[from, from + n) at `at`, less its first `skip` characters; returns the end. */
function writeBase64url(from: number, n: number, skip: number, at: number): number {
  const start = at;
  for (let i = 0; i < n; i += 3) {
    const a = pool[from + i]!;
    const b = i + 1 < n ? pool[from + i + 1]! : 0;
    const c = i + 2 < n ? pool[from + i + 2]! : 0;
    scratch[at++] = base64url[a >> 2]!;
    scratch[at++] = base64url[((a & 3) << 4) | (b >> 4)]!;
    if (i + 1 < n) scratch[at++] = base64url[((b & 15) << 2) | (c >> 6)]!;
    if (i + 2 < n) scratch[at++] = base64url[c & 63]!;
  }
  scratch.copyWithin(start, start + skip, at);
  return at - skip;
}

/**
 * `prefix` + the time (9 characters that sort as the time does: base 32, until the year 3084) + a
 * count within the millisecond (2 characters) + `bytes` random bytes in base64url less their first
 * two characters (the length is that of the time and the bytes). Ids that are primary keys of
 * tables written on every request (usage records, spans, conversation messages, tool calls) are
 * made like this so that new rows go to the end of the index instead of a random page of it:
 * SQLite and PostgreSQL then write the same few pages per commit whatever the table's size
 * (random keys cost ~3.7× the writer's time per request at 200,000 rows; docs/decisions.md
 * "Time-ordered ids"). Written into one buffer and read out once: built from parts, an id was
 * some seven strings.
 */
export function orderedId(prefix: string, bytes = 9, now = Date.now()): string {
  const seq = sequence(now);
  let at = scratch.write(prefix, 0, 'latin1');
  at = writeBase32(now, 9, at);
  at = writeBase32(seq, 2, at);
  at = writeBase64url(take(bytes), bytes, 2, at);
  return scratch.toString('latin1', 0, at);
}

/** `n` bytes of the pool from `from` as hex at `at`; returns the end. */
function writeHex(from: number, n: number, at: number): number {
  for (let i = 0; i < n; i++) {
    const v = pool[from + i]!;
    scratch[at++] = hexDigits[v >> 4]!;
    scratch[at++] = hexDigits[v & 15]!;
  }
  return at;
}

const dash = 0x2d;

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits, in the usual 8-4-4-4-12
 * form; it sorts by time like `orderedId` (budget hold ids, primary keys of budget_holds).
 */
export function orderedUuid(now = Date.now()): string {
  const at = take(10);
  pool[at] = (pool[at]! & 0x0f) | 0x70; // version 7
  pool[at + 2] = (pool[at + 2]! & 0x3f) | 0x80; // variant 10
  // The 48 bits of milliseconds as 12 hex digits, most significant first.
  let ms = now % 2 ** 48;
  for (let i = 11; i >= 0; i--) {
    const digit = ms % 16;
    scratch[i < 8 ? i : i + 1] = hexDigits[digit]!;
    ms = Math.floor(ms / 16);
  }
  scratch[8] = dash;
  scratch[13] = dash;
  let end = writeHex(at, 2, 14);
  scratch[end++] = dash;
  end = writeHex(at + 2, 2, end);
  scratch[end++] = dash;
  end = writeHex(at + 4, 6, end);
  return scratch.toString('latin1', 0, end);
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
