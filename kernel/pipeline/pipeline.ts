import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestContext } from './context.js';
import type { CommitWaiter } from '../store/group-commit.js';
import { isPhaseName, phaseNames, type Compensation, type PhaseHooks, type PhaseName } from './phases.js';
import { Roster } from './roster.js';
import { Settling } from './settling.js';

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';

interface Registered { plugin: string; fn: PhaseHooks[PhaseName] }

/**
 * Told of a settle hook (or the commit after them) that failed: the request's id is passed rather
 * than kept in a closure made per request, which lived until the commit landed.
 */
export type SettleError = (plugin: string, err: unknown, requestId: string) => void;

/** What a run that collected no compensation returns (most do): one shared list, not one per run. */
const noCompensations: Compensation[] = Object.freeze([]) as unknown as Compensation[];

/**
 * Holds the hooks of every phase in plugin order and runs a request through them.
 *
 * @example
 * pipeline.add('authenticate', 'identity', (ctx) => { ctx.state.principal = ... });
 * await pipeline.run(ctx, 'receive', 'dispatch');
 */
export class Pipeline {
  private readonly hooks = new Map<PhaseName, Registered[]>(phaseNames.map((p) => [p, []]));
  /** Settles under way: their hooks, then their commit and what waits for it (a Roster: roster.ts says why not a Set). */
  private readonly inFlight = new Roster<Promise<void> | Settling>();

  add<P extends PhaseName>(phase: P, plugin: string, fn: PhaseHooks[P]): void {
    if (!isPhaseName(phase)) {
      throw new Error(`plugin ${plugin} hooks unknown phase "${String(phase)}"; phases are: ${phaseNames.join(', ')}`);
    }
    this.hooks.get(phase)!.push({ plugin, fn });
  }

  /** Plugin names hooked into each phase, in run order (for docs and diagnostics). */
  describe(): Record<PhaseName, string[]> {
    return Object.fromEntries(phaseNames.map((p) => [p, this.hooks.get(p)!.map((h) => h.plugin)])) as Record<PhaseName, string[]>;
  }

  /**
   * Runs phases `from`..`to` inclusive. If a hook throws, the compensations returned so far run in
   * reverse order and the error is rethrown; on success they are returned to the caller, which
   * runs them if the client goes away before the reply is settled.
   *
   * Runs synchronously until a hook returns a promise, and returns the compensations themselves
   * when none did: most hooks are synchronous, and an async function here cost its promise and
   * suspended frame on every call, three calls a request. A caller awaits what it returns when
   * it is a promise; a failure is always a rejected promise, never a synchronous throw.
   */
  run(ctx: RequestContext, from: PhaseName, to: PhaseName, undo?: Compensation[]): Compensation[] | Promise<Compensation[]> {
    const end = phaseNames.indexOf(to);
    for (let i = phaseNames.indexOf(from); i <= end; i++) {
      const hooks = this.hooks.get(phaseNames[i]!)!;
      if (hooks.length === 0) continue;
      const t0 = performance.now() - ctx.startedAt;
      for (let j = 0; j < hooks.length; j++) {
        let result: unknown;
        try {
          result = hooks[j]!.fn(ctx);
        } catch (err) {
          ctx.phases?.record(i, t0, performance.now() - ctx.startedAt);
          return compensate(undo).then(() => Promise.reject(err));
        }
        if (isThenable(result)) return i === end && j === hooks.length - 1 ? this.last(ctx, result, i, t0, undo) : this.resume(ctx, result, i, j, t0, end, undo ?? []);
        if (typeof result === 'function') (undo ??= []).push(result as Compensation);
      }
      ctx.phases?.record(i, t0, performance.now() - ctx.startedAt);
    }
    return undo ?? noCompensations;
  }

  /**
   * The rest of `run` once the range's LAST hook returned a promise (dispatch, on every request):
   * nothing runs after it, so two callbacks on its promise do what `resume`'s suspended frame
   * (about 1.5 KB a request) did.
   */
  private last(ctx: RequestContext, pending: PromiseLike<unknown>, i: number, t0: number, undo: Compensation[] | undefined): Promise<Compensation[]> {
    return Promise.resolve(pending).then(
      (result) => {
        ctx.phases?.record(i, t0, performance.now() - ctx.startedAt);
        if (typeof result === 'function') (undo ??= []).push(result as Compensation);
        return undo ?? noCompensations;
      },
      (err: unknown) => {
        ctx.phases?.record(i, t0, performance.now() - ctx.startedAt);
        return compensate(undo).then(() => Promise.reject(err));
      },
    );
  }

  /** The rest of `run` once hook `j` of phase `i` returned a promise (`pending`). */
  private async resume(ctx: RequestContext, pending: PromiseLike<unknown>, i: number, j: number, t0: number, end: number, undo: Compensation[]): Promise<Compensation[]> {
    let first = true;
    try {
      for (; i <= end; i++) {
        const hooks = this.hooks.get(phaseNames[i]!)!;
        if (hooks.length === 0) continue;
        if (!first) {
          t0 = performance.now() - ctx.startedAt;
          j = 0;
        }
        try {
          // An index, not for-of: in an async function the iterator would be a heap object per phase.
          for (; j < hooks.length; j++) {
            let result = first ? pending : (hooks[j]!.fn(ctx) as unknown);
            first = false;
            if (isThenable(result)) result = await result;
            if (typeof result === 'function') undo.push(result as Compensation);
          }
        } finally {
          ctx.phases?.record(i, t0, performance.now() - ctx.startedAt);
        }
      }
      return undo;
    } catch (err) {
      await compensate(undo);
      throw err;
    }
  }

  /** Queues what settle hooks staged in `ctx.durable` for the group commit (set by the service once the store is open). */
  enqueue: ((waiter: CommitWaiter) => void) | undefined;

  /**
   * Runs every settle hook; a failing hook does not stop the others. Then commits what they
   * staged in `ctx.durable` in one transaction (and, once it is durable, the group's steps after it: GroupStep).
   * Resolves once the hooks ran (returns nothing when every hook was synchronous): the commit goes
   * on without the request (`settled()` waits for it), so a caller awaiting this does not keep the
   * request's objects (body, sockets, reply) alive through the group commit's delay and the
   * database's answer.
   */
  settle(ctx: RequestContext, onError: SettleError): void | Promise<void> {
    const rest = this.runSettleHooks(ctx, onError);
    // Every hook synchronous (the common case): nothing to wait for, no promise made.
    if (rest === undefined) return this.commitLater(ctx, onError);
    return this.track(rest.then(() => this.commitLater(ctx, onError)));
  }

  /**
   * Resolves when every settle begun so far has committed and run what waited for its commit,
   * or after `graceMs` (a database that stopped answering must not hold a shutdown forever).
   */
  async settled(graceMs = Infinity): Promise<void> {
    // As GroupCommit.idle: wait in short steps, so a settle begun meanwhile is waited for too.
    const end = Date.now() + graceMs;
    while (this.inFlight.size > 0 && Date.now() < end) {
      await Promise.race([Promise.all(this.inFlight.values().map((v) => (v instanceof Settling ? v.ended() : v))), sleep(Math.min(50, end - Date.now()), undefined, { ref: false })]);
    }
  }

  private track(p: Promise<void>): Promise<void> {
    const slot = this.inFlight.add(p);
    const leave = (): void => this.inFlight.remove(slot, p);
    p.then(leave, leave);
    return p;
  }

  /** Runs the settle hooks from `from` until one returns a promise; the rest of them then run after it (the promise returned). */
  private runSettleHooks(ctx: RequestContext, onError: SettleError, from = 0): Promise<void> | undefined {
    const hooks = this.hooks.get('settle')!;
    for (let j = from; j < hooks.length; j++) {
      let result: unknown;
      try {
        result = hooks[j]!.fn(ctx);
      } catch (err) {
        onError(hooks[j]!.plugin, err, ctx.id);
        continue;
      }
      if (isThenable(result)) return this.settleRest(ctx, onError, result, j);
    }
    return undefined;
  }

  private async settleRest(ctx: RequestContext, onError: SettleError, pending: PromiseLike<unknown>, j: number): Promise<void> {
    try {
      await pending;
    } catch (err) {
      onError(this.hooks.get('settle')![j]!.plugin, err, ctx.id);
    }
    await this.runSettleHooks(ctx, onError, j + 1);
  }

  /**
   * Starts the commit of what the hooks staged, tracked but not awaited (see `settle`): one
   * Settling waits for it (settling.ts); with nothing staged, nothing is tracked.
   */
  private commitLater(ctx: RequestContext, onError: SettleError): void {
    const durable = ctx.durable;
    if (!durable?.length) return;
    const settling = new Settling(this.inFlight, ctx.id, durable, onError);
    settling.slot = this.inFlight.add(settling);
    if (this.enqueue) this.enqueue(settling);
    else settling.fail(new Error('settle hooks staged writes but no store commits them'));
  }
}

/** Runs compensations newest first; each runs even if an earlier one failed. */
export async function compensate(undo: Compensation[] | undefined): Promise<void> {
  while (undo !== undefined && undo.length > 0) {
    const fn = undo.pop()!;
    try {
      await fn();
    } catch {
      // A compensation that fails leaves its reservation to expire (holds and windows have TTLs).
    }
  }
}
