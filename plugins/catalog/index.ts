import {
  AdminApiToken, BuiltInCatalogueToken, CacheToken, CatalogToken, CredentialVaultToken, ProviderRegistryToken, StoreToken, Type, definePlugin, type PluginContext, type Static,
} from '../../kernel/index.js';
import { builtInKeyRoutes } from './builtin-keys.js';
import { builtInModelRoutes } from './builtin-models.js';
import { BuiltInRepo } from './builtin-repo.js';
import { BuiltIns } from './builtins.js';
import { runCheck, type CheckOutcome } from './check.js';
import { CatalogCore, changeChannel } from './core.js';
import { Credentials, loadKeyRing } from './credentials.js';
import { FeedCatalogue, FeedRepo } from './feed.js';
import { ProviderHealth } from './health.js';
import { migrations } from './migrations.js';
import { modelRoutes } from './model-routes.js';
import { providerRoutes } from './provider-routes.js';
import { CatalogRepo, type ProviderRow } from './repo.js';
import { rotateCredentials } from './rotate.js';
import { CatalogSnapshot } from './snapshot.js';

const config = Type.Object(
  {
    /** Longest a provider check (admin or health) may take. */
    checkTimeoutMs: Type.Integer({ minimum: 100, default: 10_000 }),
    /** Safety reload of the snapshot, in case a change message was missed. */
    reloadIntervalMs: Type.Integer({ minimum: 1000, default: 30_000 }),
    /** How long /healthz waits for a provider check in progress. */
    healthWaitMs: Type.Integer({ minimum: 100, default: 1500 }),
    /**
     * Address overrides of built-in providers by name, e.g. `{ "openai": "http://proxy:8080/v1" }`:
     * for tests (a mock upstream) and air-gapped installs behind a proxy.
     */
    builtInAddresses: Type.Record(Type.String(), Type.String({ maxLength: 2000 }), { default: {} }),
  },
  { additionalProperties: false, default: {} },
);

type Ctx = PluginContext<Static<typeof config>>;

interface State {
  core: CatalogCore;
  timer?: NodeJS.Timeout;
  unsubscribe?: () => Promise<void>;
}

// One entry per running service (tests run several in one process); the context is the key.
const states = new WeakMap<object, State>();

/**
 * Subscribes to change messages from every replica. A cache that is down at start does not stop
 * boot (/healthz reports it); the safety reload keeps trying to subscribe meanwhile.
 */
async function listen(ctx: Ctx, state: State): Promise<void> {
  try {
    state.unsubscribe = await ctx.use(CacheToken).subscribe(changeChannel, (message) => {
      let origin = '';
      try {
        origin = String((JSON.parse(message) as { origin?: unknown }).origin ?? '');
      } catch {
        // A malformed message still means "something changed".
      }
      if (origin !== state.core.origin) void state.core.refresh();
    });
  } catch (err) {
    ctx.log.warn('catalog.reload_failed', { reason: `subscribe: ${String((err as { code?: unknown }).code ?? (err as Error).name)}` });
  }
}

function stateOf(ctx: Ctx): State {
  const state = states.get(ctx);
  if (!state) throw new Error('catalog: not registered');
  return state;
}

/**
 * The catalog: admin-added providers and models with their prices (integer micro-USD per million
 * tokens), provider keys encrypted at rest, the in-memory snapshot the request path reads
 * (CatalogToken), and the `provider:<name>` health components.
 */
export default definePlugin({
  name: 'catalog',
  dependsOn: ['admin-api', 'providers'],
  config,
  migrations,
  commands: [
    {
      name: 'admin rotate-credentials',
      summary: 'Re-encrypt stored provider keys with the recovery key version in use',
      async run(ctx, _args, out) {
        const { core } = stateOf(ctx);
        const counts = await rotateCredentials(core.repo, core.credentials, core.builtInRepo);
        ctx.log.info('catalog.credentials_rotated', counts);
        await core.changed();
        out.write(
          `rotate-credentials: ${counts.rotated} re-encrypted to version ${counts.version}, ${counts.current} already on it, ` +
            `${counts.unreadable} need a version this process was not given\n`,
        );
        if (counts.unreadable > 0) {
          throw new Error(`${counts.unreadable} stored provider key(s) need a recovery key version missing from SVC_RECOVERY_KEYS; add it and run again`);
        }
      },
    },
  ],
  register(ctx) {
    const cache = ctx.use(CacheToken);
    const ring = loadKeyRing(ctx.env, ctx.kernel.dataDir, Boolean(ctx.kernel.database.url));
    if (ring.created) ctx.log.warn('catalog.recovery_key_created', { version: ring.created });
    const credentials = new Credentials(ring);
    const repo = new CatalogRepo(ctx.use(StoreToken));
    const builtInRepo = new BuiltInRepo(ctx.use(StoreToken));
    const registry = () => ctx.optional(ProviderRegistryToken);
    const builtIns = new BuiltIns(registry(), ctx.config.builtInAddresses);
    const feedRepo = new FeedRepo(ctx.use(StoreToken));
    const snapshot = new CatalogSnapshot(repo, builtInRepo, builtIns, credentials, feedRepo);
    const healthCheck = async (row: ProviderRow): Promise<CheckOutcome> => {
      let apiKey: string | undefined;
      try {
        apiKey = snapshot.providerKey(row.name);
      } catch {
        return { status: 'error', latencyMs: 0 };
      }
      return runCheck(registry(), { name: row.name, vendor: row.vendor, address: row.address, apiKey }, ctx.config.checkTimeoutMs);
    };
    const health = new ProviderHealth(cache, snapshot, healthCheck, {
      intervalMs: 60_000,
      waitMs: ctx.config.healthWaitMs,
      checkTimeoutMs: ctx.config.checkTimeoutMs,
    });
    const core = new CatalogCore(repo, snapshot, credentials, health, cache, ctx.log, registry, ctx.config.checkTimeoutMs, builtInRepo);
    states.set(ctx, { core });
    ctx.provide(CatalogToken, snapshot);
    ctx.provide(CredentialVaultToken, credentials);
    // Signed catalogue updates (catalogue-feed plugin) replace the committed catalogue through this.
    ctx.provide(BuiltInCatalogueToken, new FeedCatalogue(feedRepo, () => core.changed(), () => snapshot.appliedFeed()));
    const admin = ctx.use(AdminApiToken);
    providerRoutes(admin, core);
    modelRoutes(admin, core);
    builtInKeyRoutes(admin, core);
    builtInModelRoutes(admin, core);
    ctx.healthComponents(() => health.list());
  },
  async start(ctx) {
    const state = stateOf(ctx);
    await state.core.snapshot.reload();
    await listen(ctx, state);
    state.timer = setInterval(() => {
      void state.core.refresh();
      if (!state.unsubscribe) void listen(ctx, state);
    }, ctx.config.reloadIntervalMs);
    state.timer.unref();
  },
  async stop(ctx) {
    const state = stateOf(ctx);
    clearInterval(state.timer);
    await state.unsubscribe?.().catch(() => undefined);
  },
});
