import { definePlugin, HealthToken, sendJson } from '../../kernel/index.js';

/**
 * GET /healthz (SPEC.md "Health status"): no sign-in; components with status, latency and an
 * error code when down; HTTP 503 when a critical component (database, cache) is down.
 */
export default definePlugin({
  name: 'health',
  register(ctx) {
    const health = ctx.use(HealthToken);
    ctx.route('GET', '/healthz', async (rc) => {
      const report = await health.run();
      sendJson(rc.res, report.status === 'down' ? 503 : 200, report, { 'cache-control': 'no-store' });
    });
  },
});
