import {
  AdminApiToken,
  CredentialVaultToken,
  BatchWriter,
  SnapshotSync,
  CacheToken,
  CatalogToken,
  DependenciesToken,
  Throttled,
  defineToken,
  definePlugin,
  IdentityToken,
  RetentionToken,
  StoreToken,
  requestChargeMicroUsd,
  TokenCounterToken,
  HoldsInFlightToken,
  type PluginContext,
} from '../../kernel/index.js';
import { Alerts } from './alerts.js';
import { BudgetsConfigSchema, type BudgetsConfig } from './config.js';
import { holdPhase, type HoldDeps } from './holds.js';
import { tokenCounter } from './input-bound.js';
import { LiveHolds } from './live.js';
import { HoldsAhead } from './holds-ahead.js';
import { migrations } from './migrations.js';
import { Reaper } from './reaper.js';
import { holdColumns, Settler } from './settler.js';
import { changeChannel, emptySnapshot, loadSnapshot, webhookSecretContext, type Snapshot } from './snapshot.js';
import { Totals } from './totals.js';
import { CounterSeeds } from './seeds.js';
import { capRoutes } from './routes/caps.js';
import { settingRoutes } from './routes/settings.js';
import { myUsageRoutes } from './routes/my-usage.js';
import { spendRoutes } from './routes/spend.js';
import { exportRoutes } from './routes/export.js';
import { budgetRetention } from './retention-kinds.js';

/** Writes buffered charges, ended holds and alert deliveries now (tests and the CLI read after it). */
export const BudgetsFlushToken = defineToken<() => Promise<void>>('budgets.flush');
/** Runs one reaper round now; resolves with the number of holds reaped (tests). */
export const BudgetsReapToken = defineToken<() => Promise<number>>('budgets.reap');

interface Running { ahead: HoldsAhead | undefined; sync: SnapshotSync<Snapshot>; totals: Totals; holdLog: BatchWriter; alerts: Alerts; reaper: Reaper; settler: Settler }

/** One service's budgets state; several services may run in one process (tests). */
const running = new WeakMap<object, Running>();
const stateOf = (ctx: PluginContext<BudgetsConfig>): Running => running.get(ctx.container)!;

const errorCode = (err: unknown): string => String((err as { code?: string }).code ?? 'error');

/**
 * Pricing holds, caps and running totals (SPEC.md "Pricing rules", "Budget holds", "Limits"):
 * every request is priced before it is sent and reserved against every applicable cap in one cache
 * call, moved to a cheaper model when a cap lacks room, settled with the real charge; alerts,
 * and spend reporting in the admin API.
 */
export default definePlugin({
  name: 'budgets',
  dependsOn: ['admin-api', 'identity', 'catalog', 'tracing'],
  config: BudgetsConfigSchema,
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const cache = ctx.use(CacheToken);
    const catalog = ctx.use(CatalogToken);
    const cfg = ctx.config;
    const graceMs = cfg.counterGraceSeconds * 1000;
    // Running totals follow the caps: a new cap needs its period's spend.
    let totals: Totals | undefined;
    const sync = new SnapshotSync<Snapshot>({
      channel: changeChannel,
      initial: emptySnapshot(),
      load: () => loadSnapshot(store),
      cache,
      intervalMs: cfg.snapshotReloadMs,
      onLoaded: () => void totals?.refresh().catch(() => {}),
      onError: (err) => ctx.log.warn('budget.snapshot_failed', { error_code: errorCode(err) }),
    });
    totals = new Totals(store, ctx.log, () => sync.current.caps, cfg.flushIntervalMs, cfg.totalsRefreshMs);
    let lastFailure = { rows: 0, error_code: 'error' };
    const holdsFailed = new Throttled((count) => ctx.log.warn('budget.flush_failed', { table: 'budget_holds', ...lastFailure, count }), cfg.logIntervalMs);
    const holdsDropped = new Throttled((count) => ctx.log.warn('budget.rows_dropped', { table: 'budget_holds', count }), cfg.logIntervalMs);
    const holdLog = new BatchWriter(store, 'budget_holds', holdColumns, cfg.flushIntervalMs, 500, cfg.maxBufferedRows, (rows, err) => {
      lastFailure = { rows, error_code: errorCode(err) };
      holdsFailed.hit();
    }, () => holdsDropped.hit());
    const live = new LiveHolds();
    const seeds = new CounterSeeds(cache, totals);
    const settler = new Settler(live, totals, seeds, holdLog, ctx.log, graceMs);
    const configured = cfg.alertWebhook.url ? { url: cfg.alertWebhook.url, secret: ctx.env[cfg.alertWebhook.secretEnv] ?? null } : null;
    const vault = ctx.use(CredentialVaultToken);
    // The stored webhook secret is encrypted like provider keys; it is opened only to sign a delivery.
    const webhook = () => {
      const w = sync.current.webhook;
      if (!w) return configured;
      try {
        return { url: w.url, secret: w.secret === null ? null : vault.decrypt(w.secret, webhookSecretContext) };
      } catch {
        // Its recovery key version is gone: never send unsigned; the alert stays recorded, undelivered.
        ctx.log.error('budget.webhook_secret_unreadable', {});
        return null;
      }
    };
    const alerts = new Alerts(store, ctx.log, () => sync.current.index, webhook, cfg.alertWebhook);
    totals.onWritten = (rows) => alerts.check(rows);
    const reaper = new Reaper(cache, store, live, seeds, holdLog, ctx.log, { expiryMs: cfg.holdExpirySeconds * 1000, intervalMs: cfg.reaperIntervalMs, graceMs });
    // The in-process cache answers at once: nothing to gain from reserving ahead.
    const ahead = cfg.holdsAhead > 0 && !cache.reserveNow ? new HoldsAhead(cache, {
      batch: cfg.holdsAhead, after: 8, marginHolds: 64, idleMs: 2000,
      maxAgeMs: Math.min(60_000, (cfg.holdExpirySeconds * 1000) / 4), holdExpiryMs: cfg.holdExpirySeconds * 1000, graceMs,
    }) : undefined;
    running.set(ctx.container, { ahead, sync, totals, holdLog, alerts, reaper, settler });

    const dependencies = ctx.use(DependenciesToken);
    // Back from an outage: read the totals at once, so requests are served again as soon as
    // /healthz says ok rather than at the next periodic refresh (issue 25: within a second).
    dependencies.database.onChange((up) => {
      if (up) void totals.refresh().catch(() => {});
    });
    // While the cache is down every request is refused anyway; once it is back, what was reserved
    // ahead may be gone with its data: give it back (a member that is gone moves nothing) and start over.
    if (ahead) dependencies.cache.onChange((up) => void (up && ahead.giveBackAll()));
    // Made once: a fresh object and closure per request were garbage on every hold.
    const holdDeps: HoldDeps = { cache, catalog, snapshot: () => sync.current, totals, seeds, live, settler, dependencies, log: ctx.log, config: cfg, ahead };
    ctx.hook('hold', (rc) => holdPhase(rc, holdDeps));
    // Synchronous when the charge is staged (most requests): the pipeline then awaits nothing.
    ctx.hook('settle', (rc) => {
      const { hold, outcome } = rc.state;
      if (!hold) return;
      // The same charge the usage record carries (tracing), so totals equal the sum of usage records.
      const charge = outcome?.sent ? requestChargeMicroUsd(outcome.modelCalls ?? []) : 0;
      const l = live.all.get(hold.id);
      // Sent: committed with the usage record before the counters move. Never sent: charge 0, nothing to keep.
      if (outcome?.sent && l && rc.durable) settler.stage(rc, l, charge);
      else return hold.release(charge, outcome?.sent ? 'settled' : 'refused');
    });

    ctx.provide(BudgetsFlushToken, async () => {
      await totals.flush();
      await holdLog.flush();
      await alerts.settle();
    });
    ctx.provide(BudgetsReapToken, () => reaper.tick());
    ctx.provide(TokenCounterToken, tokenCounter(cfg));
    ctx.provide(HoldsInFlightToken, () => {
      let microUsd = 0;
      for (const l of live.all.values()) microUsd += l.hold.a;
      return { holds: live.all.size, microUsd };
    });

    const deps = { vault, admin: ctx.use(AdminApiToken), identity: ctx.use(IdentityToken), catalog, store, sync, totals, log: ctx.log, defaults: cfg.defaultThresholds };
    capRoutes(deps);
    settingRoutes(deps);
    spendRoutes(deps);
    myUsageRoutes(deps);
    exportRoutes(deps);
  },
  async start(ctx) {
    const r = stateOf(ctx);
    await r.sync.start();
    await r.totals.refresh();
    r.totals.start();
    r.reaper.start();
    for (const k of budgetRetention) ctx.optional(RetentionToken)?.register(k);
  },
  async stop(ctx) {
    const r = stateOf(ctx);
    await r.ahead?.stop();
    await r.reaper.stop();
    r.settler.stop();
    await r.sync.stop();
    await r.totals.stop();
    await r.holdLog.flush();
    await r.alerts.settle(true);
  },
});
