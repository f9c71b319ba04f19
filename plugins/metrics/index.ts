import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import {
  CatalogToken,
  definePlugin,
  defineToken,
  DependenciesToken,
  DispatchStatsToken,
  GroupCommitToken,
  HoldsInFlightToken,
  Type,
  type PluginContext,
} from '../../kernel/index.js';
import { checkToken, exposureFrom, listenApart, scrape, type Exposure } from './exposure.js';
import { RequestMetrics } from './request-metrics.js';
import { registerReplicaGauges } from './replica-gauges.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    /** Where `/metrics` answers: `service` (its port, token required) or the separate address. */
    'metrics.exposed': { on: 'service' | 'separate'; token: boolean };
  }
}

/** Where the separate listener answers (`http://host:port/metrics`), or null (tests use port 0). */
export const MetricsAddressToken = defineToken<() => string | null>('metrics.address');

const Config = Type.Object(
  {
    /** The variable holding the scrape token (a secret never goes into the config file). */
    tokenEnv: Type.String({ default: 'SVC_METRICS_TOKEN' }),
    /** host:port of a separate listener for /metrics; SVC_METRICS_LISTEN wins over it. */
    listen: Type.Optional(Type.String({ minLength: 3 })),
  },
  { additionalProperties: false, default: {} },
);

interface Running { exposure: Exposure; registry: Registry; server?: Server; url?: string }
const running = new WeakMap<object, Running>();
const stateOf = (ctx: PluginContext): Running | undefined => running.get(ctx.container);

/**
 * Prometheus metrics (issue 30 item 5): `GET /metrics` in the text format, off unless a scrape
 * token or a separate listen address is set. Request figures come from one settle hook reading
 * what the pipeline left on each request; replica health is read at scrape time.
 */
export default definePlugin({
  name: 'metrics',
  config: Config,
  async register(ctx) {
    const exposure = exposureFrom(ctx.env, ctx.config);
    ctx.provide(MetricsAddressToken, () => stateOf(ctx)?.url ?? null);
    if (!exposure.token && !exposure.listen) return; // off: no hook, no route, /metrics answers 404
    // Loaded only when metrics are on: prom-client adds ~22 MB of RSS to a process (issue 29).
    const { collectDefaultMetrics, Registry } = await import('prom-client');
    // A registry of its own (not prom-client's global one): several services may share a process (tests).
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const catalog = () => ctx.optional(CatalogToken);
    const requests = new RequestMetrics(catalog);
    requests.register(registry);
    registerReplicaGauges(registry, {
      dependencies: ctx.use(DependenciesToken),
      commits: ctx.use(GroupCommitToken),
      dispatch: () => ctx.optional(DispatchStatsToken),
      holds: () => ctx.optional(HoldsInFlightToken)?.(),
      catalog,
    });
    ctx.hook('settle', (rc) => requests.observe(rc));
    running.set(ctx.container, { exposure, registry });
    if (!exposure.listen) {
      ctx.route('GET', '/metrics', async (rc) => {
        checkToken(rc.req, exposure.token);
        await scrape(registry, rc.res);
      });
    }
  },
  async start(ctx) {
    const r = stateOf(ctx);
    if (!r) return;
    if (r.exposure.listen) {
      const { server, url } = await listenApart(r.registry, { ...r.exposure, listen: r.exposure.listen });
      r.server = server;
      r.url = url;
    }
    ctx.log.info('metrics.exposed', { on: r.exposure.listen ? 'separate' : 'service', token: r.exposure.token !== null });
  },
  async stop(ctx) {
    const r = stateOf(ctx);
    if (!r?.server) return;
    r.server.closeAllConnections();
    await new Promise<void>((resolve) => r.server!.close(() => resolve()));
  },
});
