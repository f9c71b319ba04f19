/**
 * Per-replica cool-down of failing models (README "When the upstream fails"): after
 * `failures` transient failures in a row a model is skipped for `ms`; then exactly one request
 * probes it. The probe's success puts the model back in use; its failure starts a new cool-down.
 * Per replica (not shared through the cache): each replica learns from its own calls, which keeps
 * the hot path free of a cache round trip; a replica that never saw the outage keeps trying.
 */
interface State {
  failures: number;
  /** Until when the model is skipped (ms epoch); 0 when not cooling. */
  until: number;
  /** A probe request is in flight. */
  probing: boolean;
}

export type Admission = 'use' | 'probe' | 'skip';

export class Cooldown {
  private readonly models = new Map<string, State>();

  constructor(private readonly failures: number, private readonly ms: number, private readonly now: () => number = Date.now) {}

  /** Whether a request may call `model` now: freely, as the single probe, or not at all. */
  admit(model: string): Admission {
    const s = this.models.get(model);
    if (!s || s.until === 0) return 'use';
    if (this.now() < s.until || s.probing) return 'skip';
    s.probing = true;
    return 'probe';
  }

  succeeded(model: string): void {
    this.models.delete(model);
  }

  /** A transient failure (a non-transient one says nothing about the model's health); true when it began a cool-down. */
  failed(model: string): boolean {
    const s = this.models.get(model) ?? { failures: 0, until: 0, probing: false };
    s.failures++;
    const begins = s.probing || s.failures >= this.failures;
    if (begins) s.until = this.now() + this.ms;
    s.probing = false;
    this.models.set(model, s);
    return begins;
  }

  /** A probe that ended without telling (the client left, a non-transient error): let the next request probe. */
  released(model: string): void {
    const s = this.models.get(model);
    if (s) s.probing = false;
  }

  /** Models skipped now (their cool-down has not ended), for metrics. */
  coolingNow(): string[] {
    const now = this.now();
    const out: string[] = [];
    for (const [model, s] of this.models) if (s.until > now) out.push(model);
    return out;
  }

  cooling(model: string): boolean {
    const s = this.models.get(model);
    return !!s && s.until !== 0;
  }
}
