import { defineToken } from '../container/tokens.js';
import type { Logger } from '../log/logger.js';
import { Roster } from '../pipeline/roster.js';
import type { CheckResult } from './registry.js';

/** Thrown when a dependency call gets no answer within its deadline. */
export class DeadlineError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

/** Error codes and messages that mean "cannot reach it", as opposed to a refused statement. */
const unreachableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03']);
const unreachableText = /connection terminated|redis unavailable|connection is closed|client has encountered a connection error|cache: closed/i;

/** `timeout`, `unreachable`, or null when the failure says nothing about reachability (a bad statement). */
export function reachabilityOf(err: unknown): 'timeout' | 'unreachable' | null {
  const code = String((err as { code?: unknown })?.code ?? '');
  const message = String((err as { message?: unknown })?.message ?? '');
  if (err instanceof DeadlineError || code === 'ETIMEDOUT' || /command timed out|timeout exceeded when trying to connect|due to connection timeout/i.test(message)) return 'timeout';
  if (unreachableCodes.has(code) || code.startsWith('08') || unreachableText.test(message)) return 'unreachable';
  return null;
}

export interface DependencyOptions {
  /** Every call gets an answer within this, or counts as down. */
  deadlineMs: number;
  /** How often the dependency is pinged in the background (detects a hang without traffic). */
  probeIntervalMs: number;
  /**
   * Calls that may wait for an answer at once (counted until the driver answers, not until a
   * caller gives up: that is what queues); past it a call is refused at once with a DeadlineError.
   */
  maxPending: number;
  /**
   * Down once a call has waited this long with no answer to any call meanwhile (issue 25: fail
   * closed within a second). A busy dependency answers something within it; a silent one does not.
   */
  silentMs?: number;
}

/**
 * One call waiting for its answer. `reject` is set for calls that may be abandoned (the caller is
 * refused at the deadline or when the dependency is found down, while the driver still waits);
 * `late` once the call has passed its deadline.
 */
class Waiting {
  late = false;
  constructor(
    readonly started: number,
    readonly reject: ((err: Error) => void) | null,
  ) {}
}

/** `fn()`, with a synchronous throw turned into a rejection, so a call always leaves the count it joined. */
function invoke<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * A critical dependency (database, cache) as the service sees it: up or down, decided by the
 * answers its calls get. Calls that stay without an answer past the deadline (repeatedly, for half
 * a deadline), a refused connection or a failed background ping make it down; any answer makes it
 * up again. Only state changes are
 * logged (`health.dependency_down`, `health.dependency_up`), so an outage writes two lines, not
 * one per failed call. While it is down, model requests are refused (budgets' hold phase).
 *
 * @example
 * const db = new Dependency('database', () => store.ping(), log, { deadlineMs: 3000, probeIntervalMs: 1000, maxPending: 500 });
 * const rows = await db.call(() => query(), { abandon: true });
 */
export class Dependency {
  private errorCode: 'timeout' | 'unreachable' | null = null;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private pending = 0;
  /** When the first of the unanswered calls since the last answer gave up (performance.now()). */
  private firstTimeout: number | null = null;
  /** Since when a call has been waiting with no answer to any call (performance.now()), or null. */
  private waitingSince: number | null = null;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(up: boolean) => void> = [];
  /**
   * The calls waiting now. A Roster, not a Set: every call joins and leaves, and a Set's replaced
   * hash tables kept each call, its promises and the request awaiting them alive through
   * scavenges (roster.ts says why).
   */
  private readonly waiting = new Roster<Waiting>();
  /**
   * One timer for every call's deadline, armed for the oldest call's: calls share one deadline
   * length and join in time order, so the oldest is always the first due. A timer per call cost
   * a timer, a promise and a race per database or cache call (bench/README.md "Tenth look").
   */
  private deadlineTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    private readonly ping: () => Promise<void>,
    private readonly log: Logger,
    readonly options: DependencyOptions,
  ) {}

  get down(): boolean {
    return this.errorCode !== null;
  }

  /** Calls waiting for an answer now (metrics: a dependency slowing down shows here first). */
  get pendingCalls(): number {
    return this.pending;
  }

  /** The reason it is down, for /healthz. */
  get reason(): CheckResult['error_code'] | undefined {
    return this.errorCode ?? undefined;
  }

  /**
   * Runs one call under the deadline. `abandon: true` (reads, pings, cache commands) rejects the
   * caller at the deadline with a DeadlineError; otherwise (writes, whose outcome must be known
   * before they are retried) the caller keeps waiting for the real answer, but the dependency is
   * marked down as soon as the deadline passes, so no new request is served meanwhile. An
   * abandonable call is also refused as soon as the dependency is found down.
   */
  call<T>(fn: () => Promise<T>, options: { abandon: boolean }): Promise<T> {
    if (this.pending >= this.options.maxPending) {
      this.failed('timeout');
      return Promise.reject(new DeadlineError(this.name, this.options.deadlineMs));
    }
    const now = performance.now();
    this.pending++;
    this.waitingSince ??= now;
    if (this.deadlineTimer === undefined) this.armDeadline(now + this.options.deadlineMs);
    if (!options.abandon) {
      const w = new Waiting(now, null);
      const slot = this.waiting.add(w);
      return invoke(fn).then(
        (v) => this.succeeded(slot, w, v),
        (err: unknown) => {
          this.failedCall(slot, w, err);
          throw err;
        },
      );
    }
    return new Promise<T>((resolve, reject) => {
      const w = new Waiting(now, reject);
      const slot = this.waiting.add(w);
      invoke(fn).then(
        (v) => resolve(this.succeeded(slot, w, v)),
        (err: unknown) => {
          this.failedCall(slot, w, err);
          reject(err);
        },
      );
    });
  }

  private succeeded<T>(slot: number, w: Waiting, v: T): T {
    this.waiting.remove(slot, w);
    this.pending--;
    this.answered();
    return v;
  }

  private failedCall(slot: number, w: Waiting, err: unknown): void {
    this.waiting.remove(slot, w);
    this.pending--;
    // Only a success brings it back up: a driver's own connect timeout is not always recognisable.
    const r = reachabilityOf(err);
    if (r === 'unreachable') this.failed(r);
    else if (r === 'timeout') this.timedOut();
    else this.heard(); // a refused statement is still an answer: the dependency is not silent
  }

  private armDeadline(due: number): void {
    this.deadlineTimer = setTimeout(() => this.deadlinePassed(), Math.max(1, due - performance.now()));
    this.deadlineTimer.unref();
  }

  /**
   * The oldest call's deadline came. Decided after this loop turn's I/O, so an answer that arrived
   * while the event loop was busy (a late timer, not a silent dependency) settles its call first.
   * Then every call past its deadline counts as unanswered (abandonable ones are refused), and the
   * timer is armed for the next oldest call's deadline, if any call is waiting.
   */
  private deadlinePassed(): void {
    setImmediate(() => {
      this.deadlineTimer = undefined;
      const now = performance.now();
      const deadlineMs = this.options.deadlineMs;
      let oldest = Infinity;
      for (const w of this.waiting.values()) {
        if (now - w.started < deadlineMs) {
          oldest = Math.min(oldest, w.started);
          continue;
        }
        if (!w.late) {
          w.late = true;
          this.timedOut();
        }
        w.reject?.(new DeadlineError(this.name, deadlineMs));
      }
      if (oldest !== Infinity && this.deadlineTimer === undefined) this.armDeadline(oldest + deadlineMs);
    });
  }

  /**
   * Pings every `probeIntervalMs` (one at a time) so a hang is seen even without traffic, and
   * watches for silence (`silentMs`) a few times as often.
   */
  start(): void {
    this.timer ??= setInterval(() => void this.probe(), this.options.probeIntervalMs);
    this.timer.unref();
    const silentMs = this.options.silentMs;
    if (silentMs && !this.watchdog) {
      this.watchdog = setInterval(() => this.checkSilence(silentMs), Math.max(20, Math.floor(silentMs / 5)));
      this.watchdog.unref();
    }
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.watchdog);
    clearTimeout(this.deadlineTimer);
    this.timer = this.watchdog = this.deadlineTimer = undefined;
  }

  /** Called with true when it comes back up and false when it goes down. */
  onChange(listener: (up: boolean) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Down when a call has waited `silentMs` with no answer to any call meanwhile. Decided after this
   * loop turn's I/O, so answers that arrived while the event loop was busy count first.
   */
  private checkSilence(silentMs: number): void {
    if (this.waitingSince === null || performance.now() - this.waitingSince < silentMs) return;
    setImmediate(() => {
      if (this.waitingSince !== null && performance.now() - this.waitingSince >= silentMs) this.failed('timeout');
    });
  }

  /** One ping under the deadline; its outcome sets the state. */
  async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      await this.call(this.ping, { abandon: true });
    } catch (err) {
      if (reachabilityOf(err) === 'timeout') this.timedOut();
      else this.failed('unreachable');
    } finally {
      this.probing = false;
    }
  }

  /** The /healthz check: while down, answers at once with the reason; otherwise pings. */
  readonly check = async (): Promise<CheckResult['error_code'] | void> => {
    if (this.errorCode) {
      void this.probe(); // the next answer brings it back up
      return this.errorCode;
    }
    try {
      await this.call(this.ping, { abandon: true });
    } catch (err) {
      return reachabilityOf(err) ?? 'unreachable';
    }
  };

  /**
   * A call went unanswered. Down once unanswered calls keep coming for half a deadline with no
   * answer in between: a silent dependency does that (the background ping alone repeats every
   * interval), while one busy moment of this process, which makes every timer late at once, does not.
   */
  private timedOut(): void {
    const now = performance.now();
    if (this.firstTimeout === null) this.firstTimeout = now;
    else if (now - this.firstTimeout >= this.options.deadlineMs / 2) this.failed('timeout');
  }

  private failed(code: 'timeout' | 'unreachable'): void {
    const was = this.errorCode;
    this.errorCode = code;
    if (was !== null) return;
    this.log.warn('health.dependency_down', { component: this.name, error_code: code });
    for (const w of this.waiting.values()) w.reject?.(new DeadlineError(this.name, this.options.deadlineMs));
    for (const l of this.listeners) l(false);
  }

  /** Any answer (a result or a refused statement) shows the dependency is not silent. */
  private heard(): void {
    this.waitingSince = this.pending > 0 ? performance.now() : null;
  }

  private answered(): void {
    this.heard();
    this.firstTimeout = null;
    if (this.errorCode === null) return;
    this.errorCode = null;
    this.log.info('health.dependency_up', { component: this.name });
    for (const l of this.listeners) l(true);
  }
}

/** The critical dependencies: model requests are refused while any of them is down. */
export interface Dependencies {
  database: Dependency;
  cache: Dependency;
  /** The first critical dependency that is down, or null. */
  firstDown(): Dependency | null;
}

export const DependenciesToken = defineToken<Dependencies>('kernel.dependencies');
