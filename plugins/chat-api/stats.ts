import type { DispatchStats } from '../../kernel/index.js';
import type { Cooldown } from './cooldown.js';

type Counts = ReturnType<DispatchStats['snapshot']>;

/** The per-replica fault counters behind `DispatchStatsToken` (for the diagnostics page and metrics). */
export class Stats implements DispatchStats {
  readonly counts: Counts = { retries: 0, fallbacks: 0, overruns: 0, overrunTokens: 0, cutAtHold: 0, malformedEvents: 0, interrupted: 0 };
  private readonly begun = new Map<string, number>();

  constructor(private readonly cooldown: Pick<Cooldown, 'coolingNow'>) {}

  snapshot(): Counts {
    return { ...this.counts };
  }

  /** A model of `provider` began a cool-down (only on failures: nothing on the way of a request that succeeds). */
  cooldownBegan(provider: string): void {
    this.begun.set(provider, (this.begun.get(provider) ?? 0) + 1);
  }

  cooldownsBegun(): ReadonlyMap<string, number> {
    return this.begun;
  }

  coolingModels(): string[] {
    return this.cooldown.coolingNow();
  }
}
