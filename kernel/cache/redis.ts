import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisOptions } from 'ioredis';
import { CountersMissing, type AdjustCall, type AdjustLine, type CachePort, type ReserveLine, type ReserveResult, type Tracked, type Untrack } from './port.js';
import { clusterPrefix, connect, parseRedisUrl, type RedisClient } from './redis-url.js';
import { APPLY, APPLY_EACH } from './redis-scripts.js';

/** How long a call waits for a (re)connecting client before it fails closed. */
const READY_WAIT_MS = 1000;

/** How long a subscription change waits for Redis's confirmation (the service's cache deadline). */
const SUBSCRIBE_WAIT_MS = 1500;

/**
 * Fail fast, never crash, come back on its own: commands wait for readiness ourselves (see `up`),
 * so ioredis's offline queue stays empty and a rejected call is never sent later behind our back.
 * No `commandTimeout`: ioredis arms a timer per command and clears it with `delete`, which turns
 * every command object into a slow dictionary and kept them past young-generation collections
 * (bench/README.md "Tenth look"). The service runs every call under its cache dependency's
 * deadline instead (kernel/cache/guarded.ts: one timer for all calls in flight).
 */
const OPTIONS: RedisOptions = {
  connectTimeout: 1000,
  maxRetriesPerRequest: 0,
  // A reply lost with its connection may or may not have been applied; resending could count twice.
  autoResendUnfulfilledCommands: false,
  retryStrategy: (times) => Math.min(times * 100, 1000),
  // A socket that already failed never reports 'close' again; ioredis's 2 s guard timer would hold exit.
  disconnectTimeout: 200,
};

/** Most calls one APPLY_EACH run applies: a script blocks every other client of Redis while it runs. */
const maxCallsPerRun = 64;

/** One call of the APPLY script: its keys (the set's last), and its three arguments (the packed fields, the member, the replaced member). */
interface Packed {
  keys: string[];
  argv: [string, string, string];
}

/** An APPLY call waiting for the end of the loop's turn. */
interface QueuedCall extends Packed {
  done: (reply: number[]) => void;
  fail: (err: unknown) => void;
}

type Scripted = RedisClient & {
  svcApply(numKeys: number, keys: string[], data: Buffer): Promise<number[]>;
  svcApplyEach(numKeys: number, keys: string[], argv: [number, string, Buffer]): Promise<number[][]>;
};

/** Redis wants whole milliseconds; 0 or absent means no expiry (as in the memory cache). */
const ms = (ttlMs?: number): number => (ttlMs && ttlMs > 0 ? Math.ceil(ttlMs) : 0);

/** A sorted-set score bound as Redis spells it. */
const scoreBound = (score: number): string => (Number.isFinite(score) ? String(score) : score > 0 ? '+inf' : '-inf');

/** INCRBY fails on a non-integer after earlier lines were applied; refuse before anything is sent. */
function integer(n: number, what: string): number {
  if (!Number.isSafeInteger(n)) throw new TypeError(`cache: ${what} must be a safe integer, got ${n}`);
  return n;
}

/** Hands a call its reply from APPLY or APPLY_EACH; code 5 is the script's own error for that call. */
function answer(call: QueuedCall, reply: number[]): void {
  if (reply[0] === 5) call.fail(new Error(`cache: ${String(reply[1])}`));
  else call.done(reply);
}

/** An adjust's reply as `adjust` gives it: the new values, [] when a required member was gone; or its error. */
function adjusted(reply: number[]): number[] | Error {
  if (reply[0] === 5) return new Error(`cache: ${String(reply[1])}`);
  if (reply[0] === 4) return new CountersMissing(reply.slice(1));
  return reply[0] === 2 ? [] : reply.slice(1);
}

/** A call's outcome as `adjustEach` gives it (APPLY_EACH's 'codes'): applied, gone, or its error. */
function outcomeOf(reply: number[]): boolean | Error {
  if (reply[0] === 1) return true;
  if (reply[0] === 2) return false;
  const err = adjusted(reply);
  return err instanceof Error ? err : new Error(`cache: unexpected reply ${String(reply[0])}`);
}

/**
 * The shared cache on Redis: several keys change together in a Lua script, and the counter calls
 * (`reserve`, `adjust`) made in one turn of the event loop share one round trip and script run.
 * When Redis is unreachable every call rejects within about a second (callers fail closed); the
 * client keeps reconnecting and calls succeed again once Redis is back. A Redis that accepts
 * commands and never answers is the guard's to time out (guardCache), as the service wraps every
 * cache it opens.
 *
 * @example
 * const cache = new RedisCache('redis://127.0.0.1:6379', 'svc:');
 * await cache.reserve([{ key: 'rl:p1', amount: 1, limit: 60, ttlMs: 60_000 }]);
 */
export class RedisCache implements CachePort {
  readonly kind = 'redis' as const;
  private readonly redis: Scripted;
  private sub: RedisClient | undefined;
  private readonly handlers = new Map<string, Set<(m: string) => void>>();
  private readonly waits = new Map<RedisClient, Promise<void>>();
  private readonly prefix: string;
  private lastError: Error | undefined;
  private closed = false;
  /** APPLY calls' keys with the prefix (applyKey), bounded. */
  private readonly applyKeys = new Map<string, string>();
  /** APPLY calls made this turn of the event loop, sent together (see `apply`). */
  private queued: QueuedCall[] = [];
  /** A send is due at the check phase. */
  private sendDue = false;

  /** Connects in the background; never blocks (throws only for a malformed URL). */
  constructor(url: string, prefix: string) {
    const target = parseRedisUrl(url);
    // On a Cluster all keys share one hash tag, so every multi-key script runs (redis-url.ts).
    this.prefix = target.kind === 'cluster' ? clusterPrefix(prefix) : prefix;
    this.redis = this.watch(connect(target, OPTIONS)) as Scripted;
    this.redis.defineCommand('svcApply', { lua: APPLY });
    this.redis.defineCommand('svcApplyEach', { lua: APPLY_EACH });
  }

  /** An unhandled 'error' event would kill the process; keep the cause for the rejection message. */
  private watch<C extends RedisClient>(c: C): C {
    c.on('error', (err: Error) => {
      this.lastError = err;
    });
    return c;
  }

  /**
   * Resolves once `c` is ready; rejects on its next connection error or after READY_WAIT_MS, so a
   * down Redis fails calls at once instead of queueing them. Concurrent callers share one wait.
   */
  private up(c: RedisClient): Promise<void> {
    if (c.status === 'ready') return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('cache: closed'));
    let wait = this.waits.get(c);
    if (!wait) {
      wait = once(c, 'ready', { signal: AbortSignal.timeout(READY_WAIT_MS) })
        .then(
          () => undefined,
          (err: Error) => {
            const cause = this.lastError ?? err;
            throw new Error(`cache: Redis unavailable: ${cause.message}`, { cause });
          },
        )
        .finally(() => this.waits.delete(c));
      this.waits.set(c, wait);
    }
    return wait;
  }

  /** Runs `fn` on the client: at once when it is ready (every call but those during a reconnect), else once `up` says so. */
  private run<T>(fn: (r: Scripted) => Promise<T>): Promise<T> {
    const r = this.redis;
    if (r.status !== 'ready') return this.up(r).then(() => fn(r));
    try {
      return fn(r);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  /**
   * `k` kept for the keys of APPLY calls: the same few (a principal's caps, the rate-limit
   * window, the holds set) come back on every request, and each call made them anew.
   */
  private applyKey(key: string): string {
    let prefixed = this.applyKeys.get(key);
    if (prefixed === undefined) {
      if (this.applyKeys.size >= 10_000) this.applyKeys.clear();
      this.applyKeys.set(key, (prefixed = this.prefix + key));
    }
    return prefixed;
  }

  async ping(): Promise<void> {
    await this.run((r) => r.ping());
  }

  get(key: string): Promise<string | null> {
    return this.run((r) => r.get(this.k(key)));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    const px = ms(ttlMs);
    await this.run((r) => (px ? r.set(this.k(key), value, 'PX', px) : r.set(this.k(key), value)));
  }

  async setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    const px = ms(ttlMs);
    const res = await this.run((r) => (px ? r.set(this.k(key), value, 'PX', px, 'NX') : r.set(this.k(key), value, 'NX')));
    return res === 'OK';
  }

  async del(...keys: string[]): Promise<void> {
    if (keys.length) await this.run((r) => r.del(...keys.map((k) => this.k(k))));
  }

  async incr(key: string, by: number, ttlMs?: number): Promise<number> {
    const [value] = await this.adjust([{ key, delta: by, ttlMs }]);
    return value!;
  }

  ttl(key: string): Promise<number> {
    return this.run((r) => r.pttl(this.k(key)));
  }

  async reserve(lines: ReserveLine[], track?: Tracked): Promise<ReserveResult> {
    const set = track && (track.more?.length ? addAll(track) : ([track.replaces === undefined ? 'add' : 'swap', track.key, track.member, String(track.score), track.replaces ?? ''] as const));
    const reply = await this.apply(lines, false, set || undefined);
    if (reply[0] === 1) return { ok: true, values: reply.slice(1) };
    if (reply[0] === 3) return { ok: false, index: -1, current: 0, ttlMs: -2, gone: true };
    if (reply[0] === 4) throw new CountersMissing(reply.slice(1));
    return { ok: false, index: reply[1]!, current: reply[2]!, ttlMs: reply[3]! };
  }

  async adjust(lines: AdjustLine[], untrack?: Untrack): Promise<number[]> {
    const reply = adjusted(await this.apply(lines, true, untrack && untrackSet(untrack)));
    if (reply instanceof Error) throw reply;
    return reply;
  }

  /**
   * The calls go at once, as APPLY_EACH runs of up to `maxCallsPerRun` (the settles of group
   * commits, which the caller already gathered: their holds share the same few counters, each
   * named once, see `sendEach`).
   */
  async adjustEach(calls: readonly AdjustCall[]): Promise<Array<boolean | Error>> {
    if (calls.length === 0) return [];
    // A bad amount throws here: nothing is sent.
    const packed = calls.map((c) => this.pack(c.lines, true, c.untrack && untrackSet(c.untrack)));
    const runs: Promise<number[][]>[] = [];
    for (let at = 0; at < packed.length; at += maxCallsPerRun) runs.push(this.sendEach(packed.length <= maxCallsPerRun ? packed : packed.slice(at, at + maxCallsPerRun), 'codes'));
    return (await Promise.all(runs)).flat().map(outcomeOf);
  }

  /**
   * One run of the APPLY script's `one`; `set` is [op, key, member, score, replaced member].
   * Calls made in one turn of the event loop go to Redis together, as ONE script run that applies
   * each in turn (APPLY_EACH; each still all or nothing): under load the holds of many requests
   * share a socket write, a command and a script run instead of one each. A call waits at most
   * until the loop's check phase (setImmediate), right after the I/O callbacks that made it.
   */
  private apply(lines: readonly (ReserveLine | AdjustLine)[], adjusting: boolean, set: readonly [string, string, string, string, string] | undefined): Promise<number[]> {
    return new Promise((done, fail) => {
      // A bad amount throws here: the call is refused before anything is queued.
      const { keys, argv } = this.pack(lines, adjusting, set);
      this.queued.push({ keys, argv, done, fail });
      if (!this.sendDue) {
        this.sendDue = true;
        setImmediate(this.sendQueued);
      }
    });
  }

  private readonly sendQueued = (): void => {
    this.sendDue = false;
    const all = this.queued;
    if (all.length === 0) return;
    this.queued = [];
    // One call (every request at low concurrency): its own script run, no list of replies.
    if (all.length === 1) return this.sendOne(all[0]!);
    for (let at = 0; at < all.length; at += maxCallsPerRun) {
      const calls = at === 0 && all.length <= maxCallsPerRun ? all : all.slice(at, at + maxCallsPerRun);
      this.sendEach(calls, 'values').then(
        (replies) => {
          for (let i = 0; i < calls.length; i++) answer(calls[i]!, replies[i]!);
        },
        (err: unknown) => {
          for (const c of calls) c.fail(err);
        },
      );
    }
  };

  /** The keys go to ioredis as an array (it flattens one level), not spread into a call; the arguments as one buffer (`framed`). */
  private sendOne(call: QueuedCall): void {
    const data = framed(call.argv);
    this.run((r) => r.svcApply(call.keys.length, call.keys, data)).then(
      (reply) => answer(call, reply),
      (err: unknown) => call.fail(err),
    );
  }

  /**
   * Calls as one APPLY_EACH run, answered with their values or only their codes (APPLY_EACH says
   * which). Each key is sent once, and each call names its keys by their places in that list: the
   * settles of a group share the same four counters and the holds set, and each call's five keys
   * (some 400 bytes) were most of what the command carried.
   */
  private sendEach(calls: readonly Packed[], replies: 'values' | 'codes'): Promise<number[][]> {
    const keys: string[] = [];
    const places = new Map<string, number>();
    const pieces = new Array<string>(calls.length * 4);
    let at = 0;
    const refs: number[] = [];
    for (const c of calls) {
      refs.length = 0;
      for (const k of c.keys) {
        let place = places.get(k);
        if (place === undefined) places.set(k, (place = keys.push(k)));
        refs.push(place);
      }
      pieces[at++] = refs.join(',');
      pieces[at++] = c.argv[0];
      pieces[at++] = c.argv[1];
      pieces[at++] = c.argv[2];
    }
    const data = framed(pieces);
    return this.run((r) => r.svcApplyEach(keys.length, keys, [calls.length, replies, data]));
  }

  /**
   * One call's keys and its three arguments as `one` reads them (the set key always present,
   * last): the numbers and words packed in one text, then the member and the replaced member.
   * ioredis encodes every argument of a command on its own (a few strings each), so twenty
   * arguments a call cost more than the one text that carries them.
   */
  private pack(lines: readonly (ReserveLine | AdjustLine)[], adjusting: boolean, set?: readonly [string, string, string, string, string]): Packed {
    const keys: string[] = [];
    // One join of the fields: appending each line's template to the text made a chain of partial
    // strings that the client flattened again.
    const fields = new Array<string | number>(lines.length * 4 + 3);
    fields[0] = lines.length;
    let at = 1;
    for (const l of lines) {
      keys.push(this.applyKey(l.key));
      const limit = adjusting ? null : (l as ReserveLine).limit;
      fields[at++] = integer(adjusting ? (l as AdjustLine).delta : (l as ReserveLine).amount, 'amount');
      fields[at++] = limit === null ? '' : limit;
      fields[at++] = ms(l.ttlMs);
      fields[at++] = l.seed !== undefined ? integer(l.seed, 'seed') : l.mustExist ? 'must' : '';
    }
    fields[at++] = set ? set[0] : '';
    fields[at] = set ? set[3] : '';
    // No set op: a key is still given so every call has n + 1 (never read; the prefix keeps it on a Cluster's slot).
    keys.push(this.applyKey(set ? set[1] : '-'));
    return { keys, argv: [fields.join(','), set ? set[2] : '', set ? set[4] : ''] };
  }

  members(key: string): Promise<string[]> {
    return this.run((r) => r.zrange(this.k(key), '0', '-1'));
  }

  async expired(key: string, maxScore: number, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    return this.run((r) => r.zrangebyscore(this.k(key), '-inf', scoreBound(maxScore), 'LIMIT', 0, Math.floor(limit)));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run((r) => r.publish(this.k(channel), message));
  }

  /**
   * Never rejects for an unreachable Redis: the handler is kept and the channel is subscribed as
   * soon as the connection is ready (and again after every reconnect), so a replica that starts
   * while Redis is down still hears changes once it is back. Messages published while it was
   * away are lost; subscribers reload periodically for that.
   */
  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    const sub = this.subscriber();
    const ch = this.k(channel);
    let hs = this.handlers.get(ch);
    if (!hs) this.handlers.set(ch, (hs = new Set()));
    hs.add(handler);
    try {
      // Confirmed before returning when Redis answers, so a publish right after is heard.
      await this.up(sub);
      await answered(sub.subscribe(ch));
    } catch {
      // Unreachable now: the 'ready' listener subscribes every channel once it connects.
    }
    return async () => {
      if (this.drop(ch, handler) && this.sub?.status === 'ready') await answered(this.sub.unsubscribe(ch)).catch(() => undefined);
    };
  }

  /** Removes a handler; true when it was the channel's last one. */
  private drop(ch: string, handler: (m: string) => void): boolean {
    const hs = this.handlers.get(ch);
    if (!hs?.delete(handler) || hs.size) return false;
    this.handlers.delete(ch);
    return true;
  }

  /** A subscribed connection cannot run other commands, so messages get their own, made on first use. */
  private subscriber(): RedisClient {
    if (this.closed) throw new Error('cache: closed');
    if (!this.sub) {
      this.sub = this.watch((this.redis as { duplicate(): RedisClient }).duplicate());
      const sub = this.sub;
      sub.on('ready', () => {
        const channels = [...this.handlers.keys()];
        if (channels.length > 0) sub.subscribe(...channels).catch(() => undefined);
      });
      this.sub.on('message', (ch: string, message: string) => {
        // Like the memory cache: a throwing handler must not break the client's reply parsing.
        for (const h of this.handlers.get(ch) ?? []) queueMicrotask(() => h(message));
      });
    }
    return this.sub;
  }

  /** Quits politely when connected, otherwise drops the connection; never waits more than a second. */
  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    await Promise.all([this.redis, this.sub].map((c) => (c ? shut(c) : undefined)));
  }
}

/** `p`, or a rejection once Redis has not answered for SUBSCRIBE_WAIT_MS (subscriptions run outside the guard). */
function answered<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, sleep(SUBSCRIBE_WAIT_MS, undefined, { ref: false }).then(() => Promise.reject(new Error('cache: Redis did not answer')))]);
}

async function shut(c: RedisClient): Promise<void> {
  // QUIT lets pending replies arrive; the unref'd timer caps the wait without holding the process open.
  if (c.status === 'ready') await Promise.race([c.quit().catch(() => undefined), sleep(1000, undefined, { ref: false })]);
  c.disconnect();
}

/**
 * Texts as one argument of pieces, `<bytes>:<text>` each (the scripts' `piece` reads them back), in
 * a buffer written straight from the texts. A command with a buffer argument is encoded by ioredis
 * as buffers: its string arguments were each concatenated into the command's text (a string per
 * part of every argument), then flattened again to be written to the socket (bench/README.md
 * "Twenty-sixth look").
 */
export function framed(pieces: readonly string[]): Buffer {
  let size = 0;
  for (const p of pieces) {
    const n = Buffer.byteLength(p);
    size += decimalDigits(n) + 1 + n;
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of pieces) {
    const n = Buffer.byteLength(p);
    const digits = decimalDigits(n);
    for (let i = digits - 1, v = n; i >= 0; i--, v = Math.floor(v / 10)) out[at + i] = 48 + (v % 10);
    at += digits;
    out[at++] = 58; // ':'
    at += out.write(p, at);
  }
  return out;
}

function decimalDigits(n: number): number {
  let digits = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) digits++;
  return digits;
}

/** An untrack as the script's set op (`one`'s op, key, member, score, replaced member); several members as one text split at newlines. */
function untrackSet(u: Untrack): readonly [string, string, string, string, string] {
  if (!u.more?.length) return [u.required ? 'remreq' : 'rem', u.key, u.member, '', ''];
  const members = [u.member, ...u.more];
  if (members.some((m) => m.includes('\n'))) throw new TypeError('cache: `more` members hold no newline');
  return [u.required ? 'remallreq' : 'remall', u.key, members.join('\n'), '', ''];
}

/** Several members with one score, as one text the script splits at newlines (none may hold one). */
function addAll(track: Tracked): readonly [string, string, string, string, string] {
  const members = [track.member, ...track.more!];
  if (track.replaces !== undefined || members.some((m) => m.includes('\n'))) throw new TypeError('cache: `more` members take no `replaces` and hold no newline');
  return ['addall', track.key, members.join('\n'), String(track.score), ''];
}
