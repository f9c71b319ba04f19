import type { Dependency } from '../health/dependency.js';
import type { CachePort } from './port.js';

/**
 * The cache every plugin gets: each call runs under the cache's deadline and pending bound
 * (kernel/health/dependency.ts), so a Redis that stops answering is seen as down after one
 * deadline and no call queues without bound. A call is rejected at its deadline (the Redis client
 * has no timer of its own: one timer serves every call in flight), and one still waiting when the
 * cache is found silent is given up at once, so a request waiting on it gets its 503 within a
 * second. As with any timeout, a command given up may still have been applied by Redis.
 */
export function guardCache(cache: CachePort, dep: Dependency): CachePort {
  // The in-process cache cannot go silent: its calls are never abandoned (one promise less per call).
  const options = { abandon: cache.kind !== 'memory' };
  const run = <T>(fn: () => Promise<T>): Promise<T> => dep.call(fn, options);
  return {
    kind: cache.kind,
    ping: () => run(() => cache.ping()),
    get: (key) => run(() => cache.get(key)),
    set: (key, value, ttlMs) => run(() => cache.set(key, value, ttlMs)),
    setIfAbsent: (key, value, ttlMs) => run(() => cache.setIfAbsent(key, value, ttlMs)),
    del: (...keys) => run(() => cache.del(...keys)),
    incr: (key, by, ttlMs) => run(() => cache.incr(key, by, ttlMs)),
    ttl: (key) => run(() => cache.ttl(key)),
    reserve: (lines, track) => run(() => cache.reserve(lines, track)),
    // In-process: answered before any deadline could pass, so it runs outside the guard.
    ...(cache.reserveNow ? { reserveNow: cache.reserveNow.bind(cache) } : {}),
    ...(cache.adjustNow ? { adjustNow: cache.adjustNow.bind(cache) } : {}),
    adjust: (lines, untrack) => run(() => cache.adjust(lines, untrack)),
    adjustEach: (calls) => run(() => cache.adjustEach(calls)),
    members: (key) => run(() => cache.members(key)),
    expired: (key, maxScore, limit) => run(() => cache.expired(key, maxScore, limit)),
    publish: (channel, message) => run(() => cache.publish(channel, message)),
    // A subscription waits for the connection by design (it must not fail while Redis is away).
    subscribe: (channel, handler) => cache.subscribe(channel, handler),
    close: () => cache.close(),
  };
}
