import { createHmac, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger, Store } from '../../kernel/index.js';
import { capScopeId, type Cap, type CapIndex } from './caps.js';
import type { BudgetsConfig } from './config.js';
import type { Written } from './totals.js';

export interface AlertPayload {
  id: string;
  type: 'budget.threshold_crossed';
  cap_id: string;
  scope: Cap['scope'];
  scope_id: string;
  period: Cap['period'];
  period_key: string;
  threshold_percent: number;
  amount_micro_usd: number;
  spent_micro_usd: number;
  created_at: string;
}

/** `sha256=<hex>` HMAC-SHA256 of the exact body bytes under the webhook secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Thresholds of `cap` that `before → after` crossed upward (each is reached at ceil(amount × t / 100)). */
export function crossed(cap: Cap, before: number, after: number): number[] {
  return cap.thresholds.filter((t) => {
    const at = Math.ceil((cap.amountMicroUsd * t) / 100);
    return before < at && after >= at;
  });
}

type Webhook = { url: string; secret: string | null } | null;

/**
 * Budget alerts (SPEC.md Alerts): when settled spend first crosses a cap's threshold in a period,
 * one record (unique per cap, period and threshold, so replicas never raise it twice), delivered to
 * the webhook with an HMAC signature, retried with exponential backoff, and recorded as sent or
 * given_up (`recorded` when no webhook is set).
 */
export class Alerts {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    /** The snapshot's caps by `scope:scopeId` (a total's key starts with it). */
    private readonly caps: () => CapIndex,
    private readonly webhook: () => Webhook,
    private readonly config: BudgetsConfig['alertWebhook'],
  ) {}

  /**
   * Looks at totals a flush wrote; raises an alert for each threshold crossed. Runs on every
   * settle (sixteen totals), so it looks caps up by the total's scope instead of scanning them all.
   */
  check(written: Written[]): void {
    const caps = this.caps();
    if (caps.size === 0) return;
    for (const w of written) {
      // `scope:scopeId:period:periodKey`
      const cut = w.key.lastIndexOf(':');
      const periodAt = w.key.lastIndexOf(':', cut - 1);
      const scoped = caps.get(w.key.slice(0, periodAt));
      if (!scoped) continue;
      const period = w.key.slice(periodAt + 1, cut);
      for (const cap of scoped) {
        if (cap.period !== period) continue;
        for (const t of crossed(cap, w.before, w.after)) this.track(this.raise(cap, w.key.slice(cut + 1), t, w.after));
      }
    }
  }

  private track(p: Promise<void>): void {
    const q = p.catch(() => {}).finally(() => this.inFlight.delete(q));
    this.inFlight.add(q);
  }

  private async raise(cap: Cap, periodKey: string, threshold: number, spent: number): Promise<void> {
    const now = Date.now();
    const id = randomUUID();
    const rows = await this.store.execute<{ id: string }>(
      `insert into budget_alerts (id, cap_id, scope, scope_id, period, period_key, threshold, amount_micro_usd, spent_micro_usd, state, attempts, created_at, updated_at)
       values (?,?,?,?,?,?,?,?,?,'pending',0,?,?) on conflict (cap_id, period_key, threshold) do nothing returning id`,
      [id, cap.id, cap.scope, capScopeId(cap), cap.period, periodKey, threshold, cap.amountMicroUsd, spent, now, now],
    );
    if (rows.length === 0) return; // another flush (or replica) raised it already
    const payload: AlertPayload = {
      id,
      type: 'budget.threshold_crossed',
      cap_id: cap.id,
      scope: cap.scope,
      scope_id: capScopeId(cap),
      period: cap.period,
      period_key: periodKey,
      threshold_percent: threshold,
      amount_micro_usd: cap.amountMicroUsd,
      spent_micro_usd: spent,
      created_at: new Date(now).toISOString(),
    };
    await this.deliver(payload);
  }

  private async deliver(a: AlertPayload): Promise<void> {
    const hook = this.webhook();
    if (!hook) return this.finish(a.id, 'recorded', 0);
    const body = JSON.stringify(a);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-svc-alert-id': a.id };
    if (hook.secret) headers['x-svc-signature'] = signature(hook.secret, body);
    for (let attempt = 1; attempt <= this.config.attempts; attempt++) {
      if (await this.post(hook.url, body, headers)) {
        await this.finish(a.id, 'sent', attempt);
        this.log.info('budget.alert_delivered', { alert_id: a.id, scope: a.scope, threshold: a.threshold_percent, attempts: attempt });
        return;
      }
      if (attempt === this.config.attempts || this.stopping.signal.aborted) {
        await this.finish(a.id, 'given_up', attempt);
        this.log.warn('budget.alert_given_up', { alert_id: a.id, scope: a.scope, threshold: a.threshold_percent, attempts: attempt });
        return;
      }
      await sleep(this.config.backoffMs * 2 ** (attempt - 1), undefined, { signal: this.stopping.signal }).catch(() => {});
    }
  }

  private async post(url: string, body: string, headers: Record<string, string>): Promise<boolean> {
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(this.config.timeoutMs), this.stopping.signal]);
      const res = await fetch(url, { method: 'POST', body, headers, signal, redirect: 'manual' });
      await res.body?.cancel().catch(() => {});
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  private async finish(id: string, state: 'sent' | 'given_up' | 'recorded', attempts: number): Promise<void> {
    await this.store.execute('update budget_alerts set state = ?, attempts = ?, updated_at = ? where id = ?', [state, attempts, Date.now(), id]);
  }

  /** Waits for deliveries in progress; at stop, pending retries give up at once. */
  async settle(stop = false): Promise<void> {
    if (stop) this.stopping.abort();
    await Promise.all([...this.inFlight]);
  }
}
