import { definePlugin, SandboxClientToken, Type } from '../../kernel/index.js';
import { createSandboxClient } from './client.js';

/**
 * The main service's side of `svc sandbox` and `svc egress`: provides SandboxClientToken. It
 * starts nothing and adds no health check, because the main service does not depend on them.
 */
export default definePlugin({
  name: 'sandbox',
  config: Type.Object(
    {
      url: Type.String({ default: '' }),
      secret: Type.String({ default: '' }),
      egressUrl: Type.String({ default: '' }),
      egressSecret: Type.String({ default: '' }),
      timeoutMs: Type.Integer({ minimum: 100, default: 5000 }),
    },
    { additionalProperties: false, default: {} },
  ),
  register(ctx) {
    const c = ctx.config;
    ctx.provide(SandboxClientToken, createSandboxClient({ sandboxUrl: c.url, sandboxSecret: c.secret, egressUrl: c.egressUrl, egressSecret: c.egressSecret, timeoutMs: c.timeoutMs }));
  },
});
