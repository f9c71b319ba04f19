import { GatewayError, type PendingReservation } from '../../kernel/index.js';

/** How many model requests one person may start per fixed window. */
export interface Allowance {
  requests: number;
  windowMs: number;
}

/**
 * The counter line of one started request: a fixed window per person (not per key), keyed by the
 * window's index so every replica counts into the same key; it expires when the window ends.
 *
 * @example
 * rateLine('p1', { requests: 60, windowMs: 60_000 }, Date.now()) // { key: 'rl:p1:29000000', amount: 1, limit: 60, ttlMs: … }
 */
export function rateLine(personId: string, allowance: Allowance, now: number): PendingReservation['line'] {
  const index = Math.floor(now / allowance.windowMs);
  return { key: windowKey(personId, index), amount: 1, limit: allowance.requests, ttlMs: Math.max(1, windowEndOf(now, allowance) - now) };
}

/** Each person's current window key, made once per window rather than once per request (bounded). */
const windowKeys = new Map<string, { index: number; key: string }>();
function windowKey(personId: string, index: number): string {
  let k = windowKeys.get(personId);
  if (k === undefined || k.index !== index) {
    if (windowKeys.size >= 10_000) windowKeys.clear();
    k = { index, key: `rl:${personId}:${index}` };
    windowKeys.set(personId, k);
  }
  return k.key;
}

/** When the window holding `now` ends (ms since the epoch). */
export function windowEndOf(now: number, allowance: Allowance): number {
  return (Math.floor(now / allowance.windowMs) + 1) * allowance.windowMs;
}

/**
 * When to try again: the counter's remaining expiry as the cache reports it (the same for every
 * replica), or the window's end by this clock when the cache gave none. Seconds round up so a
 * client that waits `Retry-After` seconds never arrives early.
 */
export function retryAfter(ttlMs: number, windowEnd: number, now: number): { ms: number; seconds: number } {
  const ms = Math.max(1, Math.ceil(ttlMs > 0 ? ttlMs : windowEnd - now));
  return { ms, seconds: Math.ceil(ms / 1000) };
}

/** 429 rate_limited with `svc.retry_after_seconds` and the Retry-After / retry-after-ms headers (SPEC.md Errors). */
export function rateLimited(wait: { ms: number; seconds: number }, allowance: Allowance): GatewayError {
  return new GatewayError(
    'rate_limited',
    `More model requests were started than the rate limit allows (${allowance.requests} per ${Math.round(allowance.windowMs / 1000)} s). Retry after ${wait.seconds} s.`,
    {
      details: { retry_after_seconds: wait.seconds },
      headers: { 'retry-after': String(wait.seconds), 'retry-after-ms': String(wait.ms) },
    },
  );
}
