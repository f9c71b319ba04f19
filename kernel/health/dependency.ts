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
   * Rejecters of the abandonable calls waiting now (reads, pings, cache commands). A Roster, not a
   * Set: every call joins and leaves, and a Set's replaced hash tables kept each call's closure,
   * its promises and the request awaiting them alive through scavenges (roster.ts says why).
   */
  private readonly abandonable = new Roster<() => void>();

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
   * Runs one call under the deadline. `abandon: true` (reads, pings) rejects the caller at the
   * deadline with a DeadlineError; otherwise (writes, whose outcome must be known before they are
   * retried) the caller keeps waiting for the real answer, but the dependency is marked down as
   * soon as the deadline passes, so no new request is served meanwhile.
   */
  async call<T>(fn: () => Promise<T>, options: { abandon: boolean; abandonWhenDown?: boolean }): Promise<T> {
    if (this.pending >= this.options.maxPending) {
      this.failed('timeout');
      throw new DeadlineError(this.name, this.options.deadlineMs);
    }
    this.pending++;
    this.waitingSince ??= performance.now();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let giveUp: (() => void) | undefined;
    let slot = -1;
    const deadline = new Promise<never>((_, reject) => {
      // A call that may be abandoned is, as soon as the dependency is found silent: the request
      // waiting on it is refused now rather than at its deadline.
      if (options.abandon || options.abandonWhenDown) {
        giveUp = () => reject(new DeadlineError(this.name, this.options.deadlineMs));
        slot = this.abandonable.add(giveUp);
      }
      timer = setTimeout(() => {
        // After this loop turn's I/O: an answer that arrived while the event loop was busy (a
        // late timer, not a silent dependency) settles the call first.
        setImmediate(() => {
          if (settled) return;
          this.timedOut();
          if (options.abandon) reject(new DeadlineError(this.name, this.options.deadlineMs));
        });
      }, this.options.deadlineMs);
      timer.unref();
    });
    const work = fn().then(
      (v) => {
        settled = true;
        if (giveUp) this.abandonable.remove(slot, giveUp);
        this.pending--;
        clearTimeout(timer);
        this.answered();
        return v;
      },
      (err: unknown) => {
        settled = true;
        if (giveUp) this.abandonable.remove(slot, giveUp);
        this.pending--;
        clearTimeout(timer);
        // Only a success brings it back up: a driver's own connect timeout is not always recognisable.
        const r = reachabilityOf(err);
        if (r === 'unreachable') this.failed(r);
        else if (r === 'timeout') this.timedOut();
        else this.heard(); // a refused statement is still an answer: the dependency is not silent
        throw err;
      },
    );
    return options.abandon || options.abandonWhenDown ? Promise.race([work, deadline]) : work;
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
    this.timer = this.watchdog = undefined;
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
    for (const giveUp of this.abandonable.values()) giveUp();
    this.abandonable.clear();
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
