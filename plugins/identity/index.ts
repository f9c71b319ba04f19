import { AdminApiToken, CacheToken, CredentialVaultToken, definePlugin, IdentityToken, RetentionToken, SnapshotSync, StoreToken, type PluginContext } from '../../kernel/index.js';
import { IdentityConfigSchema, type IdentityConfig } from './config.js';
import { migrations } from './migrations.js';
import { changeChannel, emptySnapshot, loadSnapshot, type Snapshot } from './snapshot.js';
import { LastUsed } from './last-used.js';
import { Resolver } from './resolver.js';
import { RunningRequests } from './running.js';
import { bootstrapFromEnv, createAdminCommand } from './bootstrap.js';
import { sessionRoutes } from './routes/sessions.js';
import { personRoutes } from './routes/persons.js';
import { workspaceRoutes } from './routes/workspaces.js';
import { keyRoutes } from './routes/keys.js';
import { lockRoutes } from './routes/locks.js';
import { SignInThrottle } from './throttle.js';
import { OidcClients } from './oidc/client.js';
import { oidcAdminRoutes } from './oidc/routes.js';
import { oidcFlowRoutes } from './oidc/flow-routes.js';
import type { Deps } from './deps.js';
import { identityRetention } from './retention-kinds.js';

/** One service's identity state; several services may run in one process (tests), so it is kept per context. */
const running = new WeakMap<object, Deps>();

function depsOf(ctx: PluginContext<IdentityConfig>): Deps {
  const d = running.get(ctx.container);
  if (!d) throw new Error('identity: not registered');
  return d;
}

/**
 * Persons, sign-in sessions, workspaces, memberships and API keys. Provides IdentityToken, which
 * recognises callers from an in-memory snapshot kept current on every replica, and the
 * /admin/v1 endpoints that manage them.
 */
export default definePlugin({
  name: 'identity',
  dependsOn: ['admin-api'],
  config: IdentityConfigSchema,
  migrations,
  commands: [createAdminCommand(depsOf)],
  register(ctx) {
    const store = ctx.use(StoreToken);
    const inFlight = new RunningRequests(ctx.log);
    const sync = new SnapshotSync<Snapshot>({
      channel: changeChannel,
      initial: emptySnapshot(),
      load: () => loadSnapshot(store, Date.now()),
      cache: ctx.use(CacheToken),
      intervalMs: ctx.config.reloadIntervalMs,
      onLoaded: (snap, ms) => {
        ctx.log.debug('identity.snapshot_loaded', { persons: snap.persons.size, keys: snap.keysByHash.size, sessions: snap.sessionsByHash.size, duration_ms: ms });
        // Revocation takes effect mid-request too (issue 18): on every replica, as soon as it loads the change.
        inFlight.recheck(snap);
      },
      onError: (err) => ctx.log.warn('identity.snapshot_failed', { error_code: (err as { code?: string }).code ?? 'error' }),
    });
    const lastUsed = new LastUsed(store, ctx.log, ctx.config.lastUsedFlushMs);
    const resolver = new Resolver(() => sync.current, (keyId) => lastUsed.touch(keyId));
    const throttle = new SignInThrottle(ctx.use(CacheToken), ctx.log, ctx.config);
    const d: Deps = { store, sync, lastUsed, resolver, config: ctx.config, log: ctx.log, admin: ctx.use(AdminApiToken), throttle };
    running.set(ctx.container, d);
    ctx.provide(IdentityToken, resolver);
    // The principal is set by the authenticate phase (chat-api runs after this plugin), so running
    // requests are noted at the start of validate, before anything can be sent upstream.
    ctx.hook('validate', (rc) => inFlight.track(rc, sync.current));
    ctx.hook('settle', (rc) => inFlight.forget(rc));
    sessionRoutes(d);
    personRoutes(d);
    workspaceRoutes(d);
    keyRoutes(d);
    lockRoutes(d);
    // The vault belongs to the catalog plugin, which may register after this one: looked up when used.
    const vault = () => ctx.optional(CredentialVaultToken);
    const oidc = new OidcClients((i) => (i.clientSecret === null ? null : vault()!.decrypt(i.clientSecret, `identity.oidc:${i.id}`)));
    oidcAdminRoutes(d, oidc, vault);
    oidcFlowRoutes(d, oidc, ctx.use(CacheToken));
  },
  async start(ctx) {
    const d = depsOf(ctx);
    await d.sync.start();
    await bootstrapFromEnv(d, ctx.env);
    d.lastUsed.start();
    for (const k of identityRetention) ctx.optional(RetentionToken)?.register(k);
  },
  async stop(ctx) {
    const d = depsOf(ctx);
    await d.lastUsed.stop();
    await d.sync.stop();
  },
});
