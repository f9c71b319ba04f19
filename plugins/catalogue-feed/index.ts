import {
  AdminApiToken, BuiltInCatalogueToken, CacheToken, CatalogueFeedToken, DiagnosticsToken, SnapshotSync, StoreToken, definePlugin, type PluginContext,
} from '../../kernel/index.js';
import { commands } from './commands.js';
import { configSchema, loadKeys, type FeedConfig } from './config.js';
import { FeedService } from './feed.js';
import { feedRoutes } from './routes.js';
import { StateRepo, changeChannel, emptyState, migrations, type FeedState } from './state.js';

interface Running {
  sync: SnapshotSync<FeedState>;
  feed: FeedService;
}

// One entry per running service (tests run several in one process); the context is the key.
const running = new WeakMap<object, Running>();

function runningOf(ctx: PluginContext<FeedConfig>): Running {
  const r = running.get(ctx);
  if (!r) throw new Error('catalogue-feed: not registered');
  return r;
}

/**
 * Signed price catalogue updates (SPEC.md Versioning 4): off until a URL is set in config or by an
 * instance admin; then one replica per interval fetches the list, verifies its Ed25519 signature
 * against the pinned keys and hands a newer list to the catalog (BuiltInCatalogueToken), which
 * every replica picks up. Provides CatalogueFeedToken (status for diagnostics).
 */
export default definePlugin({
  name: 'catalogue-feed',
  dependsOn: ['admin-api', 'catalog'],
  config: configSchema,
  migrations,
  commands,
  register(ctx) {
    const keys = loadKeys(ctx.config);
    const cache = ctx.use(CacheToken);
    const repo = new StateRepo(ctx.use(StoreToken));
    const sync = new SnapshotSync<FeedState>({ channel: changeChannel, initial: emptyState, load: () => repo.load(), cache, intervalMs: ctx.config.reloadIntervalMs });
    const feed = new FeedService({ config: ctx.config, keys, sync, repo, catalogue: ctx.use(BuiltInCatalogueToken), cache, log: ctx.log });
    running.set(ctx, { sync, feed });
    ctx.provide(CatalogueFeedToken, feed);
    feedRoutes(ctx.use(AdminApiToken), { feed, repo, sync, keys, intervalMs: ctx.config.intervalMs });
  },
  async start(ctx) {
    const { sync, feed } = runningOf(ctx);
    await sync.start();
    feed.start();
    // The bundle's price-update part, answered from memory (written with the database down too).
    ctx.optional(DiagnosticsToken)?.addSource({ file: 'price-updates.json', collect: async () => feed.status() });
  },
  async stop(ctx) {
    const { sync, feed } = runningOf(ctx);
    await feed.stop();
    await sync.stop();
  },
});
