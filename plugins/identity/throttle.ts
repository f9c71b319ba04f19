import { isIP } from 'node:net';
import { GatewayError, isGatewayError, Throttled, type CachePort, type Logger } from '../../kernel/index.js';
import type { IdentityConfig } from './config.js';
import { sha256 } from './secrets.js';

/** What is being guessed at: a password (sign-in, the own password change) or a reset link. */
export type GuardedAction = 'sign_in' | 'password_reset';
export type ThrottleScope = 'account' | 'address';

/** One thing failures are counted against: an account (its e-mail) or a client address. */
export interface Subject {
  scope: ThrottleScope;
  /** The e-mail (lower case) or the address; kept in the cache for instance admins, never logged. */
  label: string;
}

/** A lock as instance admins see it (GET /admin/v1/sign-in-locks). */
export interface LockRecord {
  id: string;
  action: GuardedAction;
  scope: ThrottleScope;
  subject: string;
  person_id: string | null;
  failures: number;
  locked_at: number;
  until: number;
}

const locksSet = 'auth:locks';
const failKey = (id: string) => `auth:fail:${id}`;
const waitKey = (id: string) => `auth:wait:${id}`;
const lockKey = (id: string) => `auth:lock:${id}`;

/** An IPv6 client usually holds a whole /64, so it counts as one address. */
export function addressSubject(address: string): Subject {
  if (isIP(address) !== 6) return { scope: 'address', label: address };
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return { scope: 'address', label: `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64` };
}

export const accountSubject = (email: string): Subject => ({ scope: 'account', label: email.trim().toLowerCase() });

/** Cache keys carry a hash, not the e-mail or address. */
const idOf = (action: GuardedAction, s: Subject) => sha256(`${action}\n${s.scope}\n${s.label}`).slice(0, 32);

/** One attempt let through `enter`: report how it went. */
export interface Attempt {
  failed(personId: string | null): Promise<void>;
  succeeded(): Promise<void>;
}

/**
 * Throttles guessing (issue 30): failures are counted per account and per client address in the
 * cache (Redis in the scale-out shape, so every replica sees the same counts). Past
 * `freeFailures` each failure makes the subject wait `firstDelayMs` doubling each time; at
 * `lockAfterFailures` it is locked for `lockSeconds`. While waiting or locked every attempt is
 * answered 429 `rate_limited` with `Retry-After` before any password is checked, so the right
 * password does not get through either. An attempt is counted before its password is checked, so
 * a burst of parallel guesses cannot outrun the count.
 */
export class SignInThrottle {
  private readonly t: IdentityConfig['signInThrottle'];
  private readonly unavailable: Throttled;

  constructor(
    private readonly cache: CachePort,
    private readonly log: Logger,
    config: IdentityConfig,
  ) {
    this.t = config.signInThrottle;
    this.unavailable = new Throttled((count) => log.warn('auth.throttle_unavailable', { count }), 10_000);
  }

  /**
   * Counts an attempt (see `count`). While the cache does not answer, sign-in goes on uncounted
   * (the service signs people in from the database then: README "When the database or cache
   * fails"), and `auth.throttle_unavailable` says so, once per 10 s.
   */
  async enter(action: GuardedAction, subjects: Subject[], clientAddress: string): Promise<Attempt> {
    try {
      return this.guarded(await this.count(action, subjects, clientAddress));
    } catch (err) {
      if (isGatewayError(err) && err.code === 'rate_limited') throw err;
      this.unavailable.hit();
      return { failed: async () => {}, succeeded: async () => {} };
    }
  }

  private guarded(a: Attempt): Attempt {
    const quiet = (fn: () => Promise<void>) => fn().catch(() => this.unavailable.hit());
    return { failed: (personId) => quiet(() => a.failed(personId)), succeeded: () => quiet(() => a.succeeded()) };
  }

  private limits(scope: ThrottleScope) {
    return this.t[scope];
  }

  /** Counts an attempt against every subject; 429 while any of them waits or is locked. */
  private async count(action: GuardedAction, subjects: Subject[], clientAddress: string): Promise<Attempt> {
    const ids = subjects.map((s) => idOf(action, s));
    await this.refuseIfBlocked(ids);
    const counts = await this.cache.adjust(ids.map((id) => ({ key: failKey(id), delta: 1, ttlMs: this.t.windowSeconds * 1000 })));
    // Parallel guesses that passed the check together: past the lock threshold none is tried.
    const over = subjects.findIndex((s, i) => counts[i]! > this.limits(s.scope).lockAfterFailures);
    if (over >= 0) {
      const until = await this.lock(action, subjects[over]!, ids[over]!, counts[over]!, null, clientAddress);
      throw this.refusal(until);
    }
    // Once more after counting: a parallel guess that locked the subject meanwhile has set the
    // count back below the threshold (see `lock`), and this one must not be checked on that count.
    // The lock is written before the count is lowered, so whoever reads the lowered count sees it.
    await this.refuseIfBlocked(ids);
    return {
      failed: async (personId) => {
        for (const [i, s] of subjects.entries()) await this.penalise(action, s, ids[i]!, counts[i]!, personId, clientAddress);
      },
      succeeded: async () => {
        // The account starts afresh; an address keeps its other failures (a person signing in
        // to their own account must not wipe the count of guesses at others from there).
        const lines = subjects.map((s, i) => ({ key: failKey(ids[i]!), delta: -1 })).filter((_, i) => subjects[i]!.scope === 'address');
        const accounts = ids.filter((_, i) => subjects[i]!.scope === 'account').map(failKey);
        if (accounts.length) await this.cache.del(...accounts);
        if (lines.length) await this.cache.adjust(lines);
      },
    };
  }

  private async refuseIfBlocked(ids: string[]): Promise<void> {
    const values = await Promise.all(ids.flatMap((id) => [this.cache.get(lockKey(id)), this.cache.get(waitKey(id))]));
    const until = Math.max(0, ...values.map((v) => (v ? Number((JSON.parse(v) as { until: number }).until) : 0)));
    if (until > Date.now()) throw this.refusal(until);
  }

  private refusal(until: number): GatewayError {
    const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    return new GatewayError('rate_limited', `Too many failed attempts. Try again in ${seconds} s.`, { headers: { 'retry-after': String(seconds) } });
  }

  /** After the n-th failure: nothing yet, a growing wait, or the lock. */
  private async penalise(action: GuardedAction, s: Subject, id: string, n: number, personId: string | null, clientAddress: string): Promise<void> {
    const { freeFailures, lockAfterFailures } = this.limits(s.scope);
    if (n >= lockAfterFailures) {
      await this.lock(action, s, id, n, personId, clientAddress);
      return;
    }
    if (n <= freeFailures) return;
    const ms = Math.min(this.t.firstDelayMs * 2 ** (n - freeFailures - 1), this.t.lockSeconds * 1000);
    await this.cache.set(waitKey(id), JSON.stringify({ until: Date.now() + ms }), ms);
    this.logThrottled(action, s, 'delayed', n, ms, personId, clientAddress);
  }

  /**
   * Locks the subject (a lock already there is kept, never shortened). The count drops to one
   * below the threshold, so after the lock one more try is checked and another failure locks again.
   */
  private async lock(action: GuardedAction, s: Subject, id: string, n: number, personId: string | null, clientAddress: string): Promise<number> {
    const ms = this.t.lockSeconds * 1000;
    const now = Date.now();
    const record: LockRecord = { id, action, scope: s.scope, subject: s.label, person_id: personId, failures: n, locked_at: now, until: now + ms };
    if (await this.cache.setIfAbsent(lockKey(id), JSON.stringify(record), ms)) {
      await this.cache.reserve([], { key: locksSet, member: id, score: record.until });
      this.logThrottled(action, s, 'locked', n, ms, personId, clientAddress);
    }
    await this.cache.set(failKey(id), String(this.limits(s.scope).lockAfterFailures - 1), this.t.windowSeconds * 1000);
    const current = await this.cache.get(lockKey(id));
    return current ? (JSON.parse(current) as LockRecord).until : record.until;
  }

  private logThrottled(action: GuardedAction, s: Subject, state: 'delayed' | 'locked', failures: number, ms: number, personId: string | null, clientAddress: string): void {
    this.log.warn('auth.sign_in_throttled', { action, scope: s.scope, state, failures, retry_after_s: Math.ceil(ms / 1000), person_id: personId, client_address: clientAddress });
  }

  /** The locks in force on any replica, newest first. */
  async locks(): Promise<LockRecord[]> {
    const out: LockRecord[] = [];
    for (const id of await this.cache.members(locksSet)) {
      const v = await this.cache.get(lockKey(id));
      if (v) out.push(JSON.parse(v) as LockRecord);
      else await this.cache.adjust([], { key: locksSet, member: id });
    }
    return out.sort((a, b) => b.locked_at - a.locked_at);
  }

  /** Lifts a lock and forgets the subject's failures and wait; null when there was no such lock. */
  async unlock(id: string): Promise<LockRecord | null> {
    if (!/^[0-9a-f]{32}$/.test(id)) return null;
    const v = await this.cache.get(lockKey(id));
    await this.cache.del(lockKey(id), waitKey(id), failKey(id));
    await this.cache.adjust([], { key: locksSet, member: id });
    return v ? (JSON.parse(v) as LockRecord) : null;
  }
}
