import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestContext } from './context.js';
import type { DurableWrite } from '../store/group-commit.js';
import { isPhaseName, phaseNames, type Compensation, type PhaseHooks, type PhaseName } from './phases.js';
import { Roster } from './roster.js';

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';

interface Registered { plugin: string; fn: PhaseHooks[PhaseName] }

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
  private readonly inFlight = new Roster<Promise<void>>();

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
   */
  async run(ctx: RequestContext, from: PhaseName, to: PhaseName, undo: Compensation[] = []): Promise<Compensation[]> {
    const start = phaseNames.indexOf(from);
    const end = phaseNames.indexOf(to);
    try {
      for (let i = start; i <= end; i++) {
        const hooks = this.hooks.get(phaseNames[i]!)!;
        if (hooks.length === 0) continue;
        const t0 = performance.now() - ctx.startedAt;
        try {
          // An index, not for-of: in an async function the iterator would be a heap object per phase.
          for (let j = 0; j < hooks.length; j++) {
            // Most hooks are synchronous: awaiting only a real promise saves a microtask turn and
            // its allocations per hook (some thirty per request).
            let result = hooks[j]!.fn(ctx) as unknown;
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

  /** Commits what settle hooks staged in `ctx.durable` (set by the service once the store is open). */
  commit: ((writes: DurableWrite[]) => Promise<void>) | undefined;

  /**
   * Runs every settle hook; a failing hook does not stop the others. Then commits what they
   * staged in `ctx.durable` in one transaction and, once it is durable, runs `ctx.afterCommit`.
   * Resolves once the hooks ran: the commit goes on without the request (`settled()` waits for
   * it), so a caller awaiting this does not keep the request's objects (body, sockets, reply)
   * alive through the group commit's delay and the database's answer.
   */
  settle(ctx: RequestContext, onError: (plugin: string, err: unknown) => void): Promise<void> {
    return this.track(this.runSettleHooks(ctx, onError).then(() => this.commitLater(ctx, onError)));
  }

  /**
   * Resolves when every settle begun so far has committed and run what waited for its commit,
   * or after `graceMs` (a database that stopped answering must not hold a shutdown forever).
   */
  async settled(graceMs = Infinity): Promise<void> {
    // As GroupCommit.idle: wait in short steps, so a settle begun meanwhile is waited for too.
    const end = Date.now() + graceMs;
    while (this.inFlight.size > 0 && Date.now() < end) {
      await Promise.race([Promise.all(this.inFlight.values()), sleep(Math.min(50, end - Date.now()), undefined, { ref: false })]);
    }
  }

  private track(p: Promise<void>): Promise<void> {
    const slot = this.inFlight.add(p);
    void p.finally(() => this.inFlight.remove(slot, p));
    return p;
  }

  private async runSettleHooks(ctx: RequestContext, onError: (plugin: string, err: unknown) => void): Promise<void> {
    const hooks = this.hooks.get('settle')!;
    for (let j = 0; j < hooks.length; j++) {
      const { plugin, fn } = hooks[j]!;
      try {
        const result = fn(ctx) as unknown;
        if (isThenable(result)) await result;
      } catch (err) {
        onError(plugin, err);
      }
    }
  }

  /** Starts the commit of what the hooks staged, tracked but not awaited (see `settle`). */
  private commitLater(ctx: RequestContext, onError: (plugin: string, err: unknown) => void): void {
    if (!ctx.durable?.length && !ctx.afterCommit?.length) return;
    this.track(this.commitStaged(ctx.durable, ctx.afterCommit, onError));
  }

  /** The commit and what waits for it; takes only what it needs, so the request is not kept alive meanwhile. */
  private async commitStaged(durable: DurableWrite[] | undefined, afterCommit: RequestContext['afterCommit'], onError: (plugin: string, err: unknown) => void): Promise<void> {
    if (durable?.length) {
      try {
        if (!this.commit) throw new Error('settle hooks staged writes but no store commits them');
        await this.commit(durable);
      } catch (err) {
        onError('kernel', err);
        return;
      }
    }
    // An index, not for-of: in an async function the iterator would be a heap object.
    for (let i = 0; i < (afterCommit?.length ?? 0); i++) {
      try {
        await afterCommit![i]!();
      } catch (err) {
        onError('kernel', err);
      }
    }
  }
}

/** Runs compensations newest first; each runs even if an earlier one failed. */
export async function compensate(undo: Compensation[]): Promise<void> {
  while (undo.length > 0) {
    const fn = undo.pop()!;
    try {
      await fn();
    } catch {
      // A compensation that fails leaves its reservation to expire (holds and windows have TTLs).
    }
  }
}
