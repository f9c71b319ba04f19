import { defineToken } from '../container/tokens.js';
import { Roster } from '../pipeline/roster.js';

/**
 * Shutdown state that long-running work watches. `stopping` flips when SIGTERM arrives; `expired`
 * aborts when the in-flight grace (20 s) is over, so streams still running end with a final
 * server_shutting_down event. Work that runs per request watches `expiry`, not the signal.
 */
export interface Lifecycle {
  readonly stopping: boolean;
  readonly expired: AbortSignal;
  readonly expiry: ExpiryWatchers;
}

/**
 * Calls that run when the grace ends, joined and left by each request: ONE listener on the
 * process-long signal. A listener added and removed per request made the signal's listener Map
 * delete and re-add its entry every time, and V8's replaced hash tables, once in the old
 * generation, kept the requests after them alive through scavenges (roster.ts; bench/README.md
 * "Ninth look").
 *
 * @example
 * const slot = lifecycle.expiry.add(onExpired);
 * try { ... } finally { lifecycle.expiry.remove(slot, onExpired); }
 */
export class ExpiryWatchers {
  private readonly watchers = new Roster<() => void>();

  constructor(signal: AbortSignal) {
    signal.addEventListener('abort', () => {
      const due = this.watchers.values();
      this.watchers.clear();
      for (const fn of due) fn();
    }, { once: true });
  }

  /** Runs `fn` when the grace ends (not when it has ended already: check `expired.aborted`). */
  add(fn: () => void): number {
    return this.watchers.add(fn);
  }

  remove(slot: number, fn: () => void): void {
    this.watchers.remove(slot, fn);
  }
}

export const LifecycleToken = defineToken<Lifecycle>('kernel.lifecycle');
export const KernelConfigToken = defineToken<import('../config/schema.js').KernelConfig>('kernel.config');
export const LoggerToken = defineToken<import('../log/logger.js').Logger>('kernel.logger');
export const PipelineToken = defineToken<import('../pipeline/pipeline.js').Pipeline>('kernel.pipeline');
