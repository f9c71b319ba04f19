import type { ProviderSettings } from '../contracts/provider.js';
import type { UpstreamBody } from './connection.js';
import { UpstreamPool } from './pool.js';

/** Listener options made once (an object literal in the call is a new object each time). */
const once = { once: true } as const;

export type { UpstreamBody } from './connection.js';

/**
 * What a pool call needs of its signal. An AbortSignal has it; so does CallDeadline, without an
 * EventTarget: an AbortController, its signal and their listener bookkeeping on every upstream
 * call (`removeEventListener` alone was 0.9 % of svc's CPU, bench/README "Sixteenth look").
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** An upstream call's signal (UpstreamCall.signal): a CallSignal, and a real AbortSignal when an API needs one. */
export interface RequestSignal extends CallSignal {
  readonly abortSignal: AbortSignal;
  throwIfAborted(): void;
}

/**
 * What an AbortController and its signal give a call (aborted once, with a reason; listeners called
 * once each, in order), without an EventTarget: a controller, its signal and the listener
 * bookkeeping of each `addEventListener` cost ~1 KB on every request. `abortSignal` is a real
 * AbortSignal for the APIs that need one (fetch, an MCP client), made only when asked for.
 */
export class SignalLine implements RequestSignal {
  /** The first listener (usually the only one: the deadline following it, or the connection serving the call). */
  private listener: (() => void) | undefined;
  private more: Array<() => void> | undefined;
  private controller: AbortController | undefined;
  aborted = false;
  reason: unknown = undefined;

  get abortSignal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.listener === undefined && this.more === undefined) this.listener = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.listener === listener) {
      this.listener = undefined;
      return;
    }
    const at = this.more?.indexOf(listener) ?? -1;
    if (at >= 0) this.more!.splice(at, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Aborted once, as an AbortSignal is: each listener is called once, in the order added. */
  protected end(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const first = this.listener;
    const more = this.more;
    this.listener = undefined;
    this.more = undefined;
    first?.();
    if (more) for (const listener of more) listener();
  }
}

/**
 * A request's own abort switch (the dispatch phase's): what the client leaving, a stop or the end
 * of the shutdown grace pull, and every model call of the request follows (UpstreamCall.signal).
 */
export class RequestAbort extends SignalLine {
  /** One that aborts when `signal` does (a caller holding an AbortSignal: a test, a check). */
  static following(signal: AbortSignal): RequestAbort {
    const a = new RequestAbort();
    if (signal.aborted) a.abort(signal.reason);
    else signal.addEventListener('abort', () => a.abort(signal.reason), once);
    return a;
  }

  abort(reason: unknown): void {
    this.end(reason);
  }
}

/**
 * One timer that aborts an upstream call: a deadline first (the wait for the first byte), then
 * re-armed as the idle gap between events. `fired` tells which one ended the call. It is the
 * call's signal itself (`follow` returns it); `abortSignal` is a real AbortSignal for the APIs
 * that need one.
 *
 * @example
 * const d = new CallDeadline(); d.arm(5000, 'timeout'); pool.request({ …, signal: d.follow(call.signal) });
 */
export class CallDeadline extends SignalLine {
  private timer: NodeJS.Timeout | undefined;
  private why: 'timeout' | 'idle' = 'timeout';
  private parent: CallSignal | undefined;
  fired: 'timeout' | 'idle' | undefined;

  /**
   * Aborts the call also when `signal` (the request's) aborts, with its reason; returns this
   * deadline as the signal to hand to the request. One listener, removed by `clear`:
   * `AbortSignal.any` would cost a composite signal with weak references and a finalization
   * registry on every call.
   */
  follow(signal: CallSignal): CallSignal {
    if (signal.aborted) this.end(signal.reason);
    else {
      signal.addEventListener('abort', this.onParentAbort, once);
      this.parent = signal;
    }
    return this;
  }

  arm(ms: number, why: 'timeout' | 'idle'): void {
    clearTimeout(this.timer);
    this.why = why;
    this.timer = setTimeout(this.onTimer, ms);
  }

  /** Ends the call now (the consumer stopped early or the stream failed). */
  abort(): void {
    this.clear();
    this.end(new Error('done'));
  }

  clear(): void {
    clearTimeout(this.timer);
    this.parent?.removeEventListener('abort', this.onParentAbort);
    this.parent = undefined;
  }

  private readonly onTimer = (): void => {
    this.fired = this.why;
    this.end(new Error(this.why));
  };

  private readonly onParentAbort = (): void => {
    clearTimeout(this.timer);
    this.end(this.parent?.reason);
  };
}

/**
 * A body's text, at most `limit` bytes (the rest is dropped and the body destroyed): collected
 * directly by the body (connection.ts) unless a stream reader began, then read as a stream.
 *
 * @example
 * const text = await readUpstreamText(res.body, 1024 * 1024);
 */
export function readUpstreamText(body: UpstreamBody, limit: number): Promise<string> {
  return body.text(limit) ?? readStreamText(body, limit);
}

async function readStreamText(body: UpstreamBody, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const buf of body) {
    if (size + buf.length > limit) break;
    size += buf.length;
    parts.push(buf);
  }
  return parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8');
}

/** A provider's HTTP endpoint: its keep-alive pool and base path; `undefined` pool when the address is not http(s). */
export interface UpstreamEndpoint {
  url: URL | undefined;
  pool: UpstreamPool | undefined;
  /** The address's path without a trailing slash, prefixed to every call. */
  base: string;
}

/**
 * The keep-alive pool for one provider (pool.ts). `connectMs` bounds connecting; the pool has no
 * header or body timeouts, because every call carries a CallDeadline with its own (possibly
 * per-model) limits, which a pool-wide timeout would cut short. An invalid address never throws here.
 *
 * @example
 * const { pool, base } = upstreamEndpoint(settings, 128);
 */
export function upstreamEndpoint(settings: ProviderSettings, connections = 128): UpstreamEndpoint {
  const parsed = URL.canParse(settings.address) ? new URL(settings.address) : undefined;
  const url = parsed?.protocol === 'http:' || parsed?.protocol === 'https:' ? parsed : undefined;
  const t = settings.timeouts;
  const pool = url ? new UpstreamPool(url, { connections, connectTimeout: t.connectMs }) : undefined;
  return { url, pool, base: (url?.pathname ?? '').replace(/\/+$/, '') };
}

/**
 * Lets in-flight calls finish for `graceMs`, then drops the pool's connections.
 *
 * @example
 * await closeUpstream(pool, 5000);
 */
export async function closeUpstream(pool: UpstreamPool | undefined, graceMs: number): Promise<void> {
  if (!pool) return;
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((done) => {
    timer = setTimeout(() => void pool.destroy().catch(() => undefined).then(done), graceMs);
  });
  await Promise.race([pool.close().catch(() => undefined), forced]);
  clearTimeout(timer);
}

/**
 * Waits for a generator's first item, then hands out an iterable that starts with it: a stream
 * call resolves only once its first chunk arrived, so errors before it are ordinary errors.
 *
 * @example
 * return await startedWithFirst(this.read(res.body, …));
 */
export async function startedWithFirst<T>(items: AsyncGenerator<T, void, undefined>): Promise<AsyncIterable<T>> {
  let first: IteratorResult<T, void> | undefined = await items.next();
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const f = first;
        first = undefined;
        return f ? Promise.resolve(f) : items.next();
      },
      return: async () => {
        first = undefined;
        return items.return(undefined);
      },
    }),
  };
}
