import { AdminApiToken, definePlugin, DiagnosticsToken, SandboxClientToken, StoreToken, Type } from '../../kernel/index.js';
import { createSandboxClient } from './client.js';
import { EgressAllowList } from './egress-list.js';
import { migrations } from './migrations.js';
import { egressRoutes } from './routes.js';

/** Each service instance's egress allow-list (a test may run several instances in one process). */
const lists = new WeakMap<object, EgressAllowList>();

/**
 * The main service's side of `svc sandbox` and `svc egress`: provides SandboxClientToken and owns
 * the instance admins' egress allow-list (pushed to the proxy). It adds no health check, because
 * the main service does not depend on them. Addresses come from the config or SVC_SANDBOX_URL /
 * SVC_EGRESS_URL; the shared secrets only from SVC_SANDBOX_SECRET / SVC_EGRESS_SECRET (never from
 * a config file).
 */
export default definePlugin({
  name: 'sandbox',
  dependsOn: ['admin-api'],
  config: Type.Object(
    {
      url: Type.String({ default: '' }),
      egressUrl: Type.String({ default: '' }),
      timeoutMs: Type.Integer({ minimum: 100, default: 5000 }),
      /** How often the egress allow-list is pushed again (a restarted proxy gets it back). */
      egressPushMs: Type.Integer({ minimum: 1000, default: 60_000 }),
    },
    { additionalProperties: false, default: {} },
  ),
  migrations,
  register(ctx) {
    const c = ctx.config;
    const egressUrl = ctx.env.SVC_EGRESS_URL ?? c.egressUrl;
    const egressSecret = ctx.env.SVC_EGRESS_SECRET ?? '';
    const client = createSandboxClient({
      sandboxUrl: ctx.env.SVC_SANDBOX_URL ?? c.url,
      sandboxSecret: ctx.env.SVC_SANDBOX_SECRET ?? '',
      egressUrl,
      egressSecret,
      timeoutMs: c.timeoutMs,
    });
    ctx.provide(SandboxClientToken, client);
    const list = new EgressAllowList(ctx.use(StoreToken), client, egressUrl !== '' && egressSecret !== '', ctx.log);
    lists.set(ctx.container, list);
    egressRoutes(ctx.use(AdminApiToken), list);
  },
  start(ctx) {
    lists.get(ctx.container)!.start(ctx.config.egressPushMs);
    // SPEC.md Operations commands: the bundle says whether the service reaches the sandbox and its proxy.
    const client = ctx.use(SandboxClientToken);
    ctx.optional(DiagnosticsToken)?.addSource({ file: 'sandbox.json', collect: async () => {
      const r = await client.reachability();
      return { sandbox: { state: r.sandbox }, egress_proxy: { state: r.egress } };
    } });
  },
  stop(ctx) {
    lists.get(ctx.container)?.stop();
  },
});
