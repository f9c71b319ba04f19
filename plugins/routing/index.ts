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
import { routeRoutes } from './routes/routes.js';
import { modelUseRoutes } from './routes/model-uses.js';
import { enabledRoutes, selectRouted } from './select.js';
import { changeChannel, emptySnapshot, loadSnapshot, type Snapshot } from './snapshot.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'routing.snapshot_failed': { error_code: string };
  }
}

interface Running { sync: SnapshotSync<Snapshot>; classifier: ClassifierHost; loadIfRouted: () => boolean }

/** One service's routing state; several services may run in one process (tests). */
const running = new WeakMap<object, Running>();
const stateOf = (ctx: PluginContext<RoutingConfig>): Running => running.get(ctx.container)!;

/**
 * Workspace routing (SPEC.md Route, Model selection): routes and routing settings in the admin
 * API, served from a per-replica snapshot; the select phase for `route/<name>` and `auto`
 * (pinned, signal, classifier, default; sticky through conversations); the classifier's health.
 */
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
    // Loads the encoder the first time a request, a health probe or start sees an enabled route
    // (another replica's new route arrives through the snapshot); cheap once requested.
    const loadIfRouted = (): boolean => {
      if (!classifier.requested && [...sync.current.routes.values()].some((rs) => rs.some((r) => r.enabled))) void classifier.load(cfg.classifier);
      return classifier.requested;
    };
    running.set(ctx.container, { sync, classifier, loadIfRouted });

    ctx.provide(RoutesToken, {
      enabledRoutes: (workspaceId) => enabledRoutes(sync.current, workspaceId).map((r) => ({ name: r.name, description: r.description })),
    });
    const thresholds = { confidenceThreshold: cfg.confidenceThreshold, margin: cfg.margin, minChars: cfg.minChars };
    ctx.hook('select', (rc) => {
      loadIfRouted();
      return selectRouted(rc, { catalog, snapshot: () => sync.current, classifier, thresholds, conversations: () => ctx.optional(ConversationsToken) });
    });
    // Not critical: without the classifier chat still works and `auto` goes to the default (SPEC.md Health status).
    // With no route anywhere nothing needs classifying, so the check is ok without the model loaded.
    ctx.health('classifier', async () => (!loadIfRouted() || classifier.state === 'ready' ? undefined : 'unavailable'), { critical: false });
    routeRoutes({ admin: ctx.use(AdminApiToken), catalog, store, sync });
    modelUseRoutes(ctx.use(AdminApiToken), sync);
  },
  async start(ctx) {
    const r = stateOf(ctx);
    await r.sync.start();
    // Never block boot on the model: `auto` answers classifier_unavailable until it is ready. Turned
    // off in config, "load" fails at once, so health says unavailable from the start as before.
    if (!ctx.config.classifier.enabled) void r.classifier.load(ctx.config.classifier);
    else r.loadIfRouted();
  },
  async stop(ctx) {
    const r = stateOf(ctx);
    await r.sync.stop();
    await r.classifier.close();
  },
});
