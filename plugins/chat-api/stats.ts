import type { DispatchStats } from '../../kernel/index.js';

type Counts = ReturnType<DispatchStats['snapshot']>;

/** The per-replica fault counters behind `DispatchStatsToken` (for the diagnostics page). */
export class Stats implements DispatchStats {
  readonly counts: Counts = { retries: 0, fallbacks: 0, overruns: 0, overrunTokens: 0, cutAtHold: 0, malformedEvents: 0, interrupted: 0 };

  snapshot(): Counts {
    return { ...this.counts };
  }
}
