import type { Registry } from 'prom-client';
import type { CatalogService, Dependencies, DispatchStats, GroupCommit } from '../../kernel/index.js';
import { ScrapedFamily } from './families.js';

/** Where the scrape-time figures come from; each may be absent (its plugin turned off). */
export interface ReplicaSources {
  dependencies: Dependencies;
  commits: GroupCommit;
  dispatch: () => DispatchStats | undefined;
  holds: () => { holds: number; microUsd: number } | undefined;
  catalog: () => CatalogService | undefined;
}

/** `{provider: n}` of the models cooling now (a model's provider from the catalog). */
function coolingByProvider(s: ReplicaSources): Array<{ labels: Record<string, string>; value: number }> {
  const counts = new Map<string, number>();
  for (const model of s.dispatch()?.coolingModels() ?? []) {
    const provider = s.catalog()?.model(model)?.provider ?? '';
    counts.set(provider, (counts.get(provider) ?? 0) + 1);
  }
  return [...counts].map(([provider, value]) => ({ labels: { provider }, value }));
}

/**
 * This replica's health as gauges and counters read at each scrape (README "Metrics"): the
 * database's and cache's state and calls waiting, the group commit's queue and outcomes, budget
 * holds in flight, upstream cool-downs.
 */
export function registerReplicaGauges(registry: Registry, s: ReplicaSources): void {
  const deps = () => [s.dependencies.database, s.dependencies.cache];
  const holds = () => s.holds() ?? { holds: 0, microUsd: 0 };
  const families = [
    new ScrapedFamily('svc_dependency_up', '1 while the dependency answers (database, cache), 0 while it counts as down (model requests are refused).', 'gauge',
      () => deps().map((d) => ({ labels: { dependency: d.name }, value: d.down ? 0 : 1 }))),
    new ScrapedFamily('svc_dependency_pending_calls', 'Calls to the dependency waiting for an answer now.', 'gauge',
      () => deps().map((d) => ({ labels: { dependency: d.name }, value: d.pendingCalls }))),
    new ScrapedFamily('svc_group_commit_pending_requests', 'Settled requests whose money records wait for their commit.', 'gauge', () => [{ value: s.commits.pending }]),
    new ScrapedFamily('svc_group_commit_transactions_total', 'Group-commit transactions committed.', 'counter', () => [{ value: s.commits.counts.groups }]),
    new ScrapedFamily('svc_group_commit_requests_total', 'Requests whose money records were committed.', 'counter', () => [{ value: s.commits.counts.requests }]),
    new ScrapedFamily('svc_group_commit_retries_total', 'Group-commit attempts retried after the database failed.', 'counter', () => [{ value: s.commits.counts.retries }]),
    new ScrapedFamily('svc_group_commit_failures_total', 'Requests whose money records could not be committed (logged store.commit_failed or store.commit_abandoned).', 'counter', () => [{ value: s.commits.counts.failed }]),
    new ScrapedFamily('svc_holds_in_flight', 'Budget holds reserved by this replica and not yet settled.', 'gauge', () => [{ value: holds().holds }]),
    new ScrapedFamily('svc_held_in_flight_micro_usd', 'Sum of the budget holds in flight on this replica, micro-USD.', 'gauge', () => [{ value: holds().microUsd }]),
    new ScrapedFamily('svc_upstream_cooldowns_total', 'Cool-downs begun (a model skipped after repeated transient failures), by provider.', 'counter',
      () => [...(s.dispatch()?.cooldownsBegun() ?? [])].map(([provider, value]) => ({ labels: { provider }, value }))),
    new ScrapedFamily('svc_upstream_models_cooling', 'Models cooling down now, by provider.', 'gauge', () => coolingByProvider(s)),
  ];
  for (const f of families) f.register(registry);
}
