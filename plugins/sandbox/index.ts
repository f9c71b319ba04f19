import { definePlugin, DiagnosticsToken, SandboxClientToken, Type } from '../../kernel/index.js';
import { createSandboxClient } from './client.js';

/**
 * The main service's side of `svc sandbox` and `svc egress`: provides SandboxClientToken. It
 * starts nothing and adds no health check, because the main service does not depend on them.
 * Addresses come from the config or SVC_SANDBOX_URL / SVC_EGRESS_URL; the shared secrets only from
 * SVC_SANDBOX_SECRET / SVC_EGRESS_SECRET (never from a config file).
 */
export default definePlugin({
  name: 'sandbox',
  config: Type.Object(
    {
      url: Type.String({ default: '' }),
      egressUrl: Type.String({ default: '' }),
      timeoutMs: Type.Integer({ minimum: 100, default: 5000 }),
    },
    { additionalProperties: false, default: {} },
  ),
  register(ctx) {
    const c = ctx.config;
    ctx.provide(
      SandboxClientToken,
      createSandboxClient({
        sandboxUrl: ctx.env.SVC_SANDBOX_URL ?? c.url,
        sandboxSecret: ctx.env.SVC_SANDBOX_SECRET ?? '',
        egressUrl: ctx.env.SVC_EGRESS_URL ?? c.egressUrl,
        egressSecret: ctx.env.SVC_EGRESS_SECRET ?? '',
        timeoutMs: c.timeoutMs,
      }),
    );
  },
  start(ctx) {
    // SPEC.md Operations commands: the bundle says whether the service reaches the sandbox and its proxy.
    const client = ctx.use(SandboxClientToken);
    ctx.optional(DiagnosticsToken)?.addSource({ file: 'sandbox.json', collect: async () => {
      const r = await client.reachability();
      return { sandbox: { state: r.sandbox }, egress_proxy: { state: r.egress } };
    } });
  },
});
