import { randomBytes } from 'node:crypto';
import type { CachePort, Logger, ProviderRegistry } from '../../kernel/index.js';
import { runCheck, storedStatus, type CheckOutcome, type CheckTarget, listProviderModels } from './check.js';
import type { Credentials } from './credentials.js';
import { fingerprint, type ProviderHealth } from './health.js';
import { instanceScope, type BuiltInRepo } from './builtin-repo.js';
import type { CatalogRepo } from './repo.js';
import type { CatalogSnapshot, SnapshotDiff } from './snapshot.js';

/** The cache channel on which any replica announces that the catalog tables changed. */
export const changeChannel = 'catalog.changed';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'catalog.provider_checked': { provider: string; status: string; latency_ms: number };
    'catalog.reload_failed': { reason: string };
    'catalog.recovery_key_created': { version: string };
    'catalog.credentials_rotated': { rotated: number; current: number; unreadable: number; version: string };
    /** A built-in provider's key was set or removed; `workspace_id` is null for the instance-wide key. Never the key. */
    'catalog.builtin_key_changed': { provider: string; workspace_id: string | null; action: 'set' | 'removed' };
    /** An instance admin set or cleared a built-in provider's address. Never the address (it may name an internal proxy). */
    'catalog.builtin_address_changed': { provider: string; action: 'set' | 'cleared' };
  }
}

/**
 * The catalog's moving parts as its routes, health and commands share them. Every write goes
 * through `changed()`, which reloads this replica's snapshot before the response is sent and tells
 * the other replicas over the cache.
 */
export class CatalogCore {
  /** Tags this process's change messages so it does not reload twice for its own writes. */
  readonly origin = randomBytes(8).toString('hex');

  constructor(
    readonly repo: CatalogRepo,
    readonly snapshot: CatalogSnapshot,
    readonly credentials: Credentials,
    readonly health: ProviderHealth,
    private readonly cache: CachePort,
    readonly log: Logger,
    private readonly registry: () => ProviderRegistry | undefined,
    private readonly checkTimeoutMs: number,
    readonly builtInRepo: BuiltInRepo,
  ) {}

  /** After a write here: reload, drop stale adapters, tell listeners, then the other replicas. */
  async changed(): Promise<void> {
    await this.apply(await this.snapshot.reload());
    await this.cache.publish(changeChannel, JSON.stringify({ origin: this.origin })).catch(() => undefined);
  }

  /** A change message or the safety timer: reload, and act on what differs. */
  async refresh(): Promise<void> {
    try {
      await this.apply(await this.snapshot.reload());
    } catch (err) {
      this.log.warn('catalog.reload_failed', { reason: String((err as { code?: unknown }).code ?? (err as Error).name) });
    }
  }

  private async apply(diff: SnapshotDiff): Promise<void> {
    const registry = this.registry();
    for (const name of diff.providers) registry?.invalidate(name);
    this.snapshot.notify(diff);
  }

  /** The provider's own model ids (see listProviderModels). */
  providerModels(target: CheckTarget): Promise<string[]> {
    return listProviderModels(this.registry(), target, this.checkTimeoutMs);
  }

  /**
   * Runs the free check for a provider as saved and stores its result on the row (a built-in's: on
   * its key's row); an instance-wide result also counts as that provider's health check for the
   * next minute. Workspace keys never show on /healthz.
   */
  async checkAndSave(target: CheckTarget, apiKeyEnc: string | null, workspaceId = instanceScope): Promise<CheckOutcome> {
    const outcome = await runCheck(this.registry(), target, this.checkTimeoutMs);
    if (outcome.status === 'unchecked') return outcome;
    if (this.snapshot.builtIns.has(target.name)) await this.builtInRepo.saveCheck(target.name, workspaceId, storedStatus(outcome), new Date());
    else await this.repo.saveCheck(target.name, storedStatus(outcome), new Date());
    if (workspaceId === instanceScope) await this.health.record(target.name, fingerprint(target.address, apiKeyEnc), outcome);
    this.log.info('catalog.provider_checked', { provider: target.name, status: storedStatus(outcome), latency_ms: outcome.latencyMs });
    return outcome;
  }
}
