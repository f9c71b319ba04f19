import {
  AdminApiToken,
  CacheToken,
  CatalogToken,
  ConversationsToken,
  definePlugin,
  RoutesToken,
  SnapshotSync,
  StoreToken,
  type PluginContext,
} from '../../kernel/index.js';
import { ClassifierHost } from './classifier-host.js';
import { RoutingConfigSchema, type RoutingConfig } from './config.js';
import { migrations } from './migrations.js';
import { RecentDecisions } from './recent.js';
import { explainRoutes } from './routes/explain.js';
import { routeRoutes } from './routes/routes.js';
import { modelUseRoutes } from './routes/model-uses.js';
import { enabledRoutes, selectRouted } from './select.js';
import { changeChannel, emptySnapshot, loadSnapshot, type Snapshot } from './snapshot.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'routing.snapshot_failed': { error_code: string };
  }
}

interface Running { sync: SnapshotSync<Snapshot>; classifier: ClassifierHost }

/** One service's routing state; several services may run in one process (tests). */
const running = new WeakMap<object, Running>();
const stateOf = (ctx: PluginContext<RoutingConfig>): Running => running.get(ctx.container)!;

/**
 * Workspace routing (SPEC.md Route, Model selection): routes and routing settings in the admin
 * API, served from a per-replica snapshot; the select phase for `route/<name>` and `auto`
 * (pinned, signal, classifier, default; sticky through conversations); the classifier's health.
 */
/** True when some workspace has a route (enabled or not: it may be enabled any moment). */
const anyRoute = (snap: Snapshot): boolean => [...snap.routes.values()].some((routes) => routes.length > 0);

export default definePlugin({
  name: 'routing',
  dependsOn: ['admin-api', 'identity', 'catalog'],
  config: RoutingConfigSchema,
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const catalog = ctx.use(CatalogToken);
    const cfg = ctx.config;
    const sync = new SnapshotSync<Snapshot>({
      channel: changeChannel,
      initial: emptySnapshot(),
      load: () => loadSnapshot(store),
      cache: ctx.use(CacheToken),
      intervalMs: cfg.snapshotReloadMs,
      onError: (err) => ctx.log.warn('routing.snapshot_failed', { error_code: String((err as { code?: string }).code ?? 'error') }),
    });
    const classifier = new ClassifierHost(ctx.log);
    const recent = new RecentDecisions();
    running.set(ctx.container, { sync, classifier });

    ctx.provide(RoutesToken, {
      enabledRoutes: (workspaceId) => enabledRoutes(sync.current, workspaceId).map((r) => ({ name: r.name, description: r.description })),
    });
    const thresholds = { confidenceThreshold: cfg.confidenceThreshold, margin: cfg.margin, minChars: cfg.minChars };
    // Made once: an object and two closures per request otherwise.
    const selectDeps = { catalog, snapshot: () => sync.current, classifier, thresholds, conversations: () => ctx.optional(ConversationsToken), recent };
    ctx.hook('select', (rc) => selectRouted(rc, selectDeps));
    // Not critical: without the classifier chat still works and `auto` goes to the default (SPEC.md Health status).
    // ok exactly when a decision can be made (loaded and answering).
    ctx.health('classifier', async () => (classifier.state === 'ready' ? undefined : 'unavailable'), { critical: false });
    explainRoutes({ admin: ctx.use(AdminApiToken), sync, classifier, thresholds, recent });
    routeRoutes({ admin: ctx.use(AdminApiToken), catalog, store, sync });
    modelUseRoutes(ctx.use(AdminApiToken), sync);
  },
  async start(ctx) {
    const r = stateOf(ctx);
    await r.sync.start();
    // The built-in table loads in a fraction of a second: boot waits for it when a route exists, and
    // otherwise it loads on the first `auto` request that asks (an instance without routes never
    // holds it). An ONNX encoder loads in its worker in the background from start (health says
    // unavailable until it is ready).
    const cfg = ctx.config.classifier;
    if (cfg.onnxDir) void r.classifier.load(cfg);
    else if (anyRoute(r.sync.current)) await r.classifier.load(cfg);
    else r.classifier.defer(cfg);
  },
  async stop(ctx) {
    const r = stateOf(ctx);
    await r.sync.stop();
    await r.classifier.close();
  },
});
