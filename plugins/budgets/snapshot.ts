import { randomBytes } from 'node:crypto';
import type { CachePort, Logger, Store } from '../../kernel/index.js';
import { indexCaps, type Cap, type CapIndex, type Scope } from './caps.js';
import type { Period } from './periods.js';

export const changeChannel = 'budgets.changed';

/** What the request path reads: caps and settings, in memory. */
export interface Snapshot {
  caps: Cap[];
  index: CapIndex;
  /** Workspace id → budget fallback model name. */
  fallbackModel: Map<string, string>;
  /** The alert webhook set through the admin API (instance-wide), if any. */
  webhook: { url: string; secret: string | null } | null;
}

interface CapRow { id: string; scope: string; workspace_id: string; subject_id: string; amount_micro_usd: string | number; period: string; thresholds: string }
interface SettingRow { workspace_id: string; fallback_model: string | null; webhook_url: string | null; webhook_secret: string | null }

export function capFromRow(r: CapRow): Cap {
  return {
    id: r.id,
    scope: r.scope as Scope,
    workspaceId: r.workspace_id,
    subjectId: r.subject_id,
    amountMicroUsd: Number(r.amount_micro_usd),
    period: r.period as Period,
    thresholds: JSON.parse(r.thresholds) as number[],
  };
}

export async function loadSnapshot(store: Store): Promise<Snapshot> {
  const caps = (await store.execute<CapRow>('select * from budget_caps order by created_at, id')).map(capFromRow);
  const settings = await store.execute<SettingRow>('select * from budget_settings');
  const fallbackModel = new Map<string, string>();
  let webhook: Snapshot['webhook'] = null;
  for (const s of settings) {
    if (s.workspace_id === '*') webhook = s.webhook_url ? { url: s.webhook_url, secret: s.webhook_secret } : null;
    else if (s.fallback_model) fallbackModel.set(s.workspace_id, s.fallback_model);
  }
  return { caps, index: indexCaps(caps), fallbackModel, webhook };
}

/**
 * Keeps this replica's caps and settings current: a write here reloads before its response and
 * publishes a change message; other replicas reload when it arrives, and every `intervalMs` anyway.
 */
export class SnapshotSync {
  private snap: Snapshot = { caps: [], index: new Map(), fallbackModel: new Map(), webhook: null };
  private loading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private readonly origin = randomBytes(8).toString('hex');
  /** Called after each successful load (running totals follow the caps). */
  onLoaded: () => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly cache: CachePort,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  get current(): Snapshot {
    return this.snap;
  }

  async start(): Promise<void> {
    await this.reload();
    this.unsubscribe = await this.cache.subscribe(changeChannel, (m) => {
      if (m !== this.origin) this.reload().catch(() => {});
    });
    this.timer = setInterval(() => this.reload().catch(() => {}), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unsubscribe?.().catch(() => {});
    await this.loading?.catch(() => {});
  }

  /** After a committed write: reload here, then tell the other replicas. */
  async changed(): Promise<void> {
    await this.reload();
    await this.cache.publish(changeChannel, this.origin).catch(() => {});
  }

  /** Loads now, or once more after the load in progress (which may have read before the change). */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          this.snap = await loadSnapshot(this.store);
          this.onLoaded();
        } while (this.again);
      } catch (err) {
        this.log.warn('budget.snapshot_failed', { error_code: (err as { code?: string }).code ?? 'error' });
        throw err;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }
}
