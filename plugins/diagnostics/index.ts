import {
  AdminApiToken,
  CacheToken,
  definePlugin,
  DiagnosticsToken,
  HealthToken,
  PluginOrderToken,
  RetentionToken,
  StoreToken,
  Type,
  type DiagnosticsJob,
  type DiagnosticsSource,
  type PluginContext,
} from '../../kernel/index.js';
import { bundle, type Sources } from './bundle.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'diagnostics.written': { via: 'admin_api' | 'command'; bytes: number };
  }
}

interface Registry {
  contributed: Map<string, DiagnosticsSource>;
  jobs: DiagnosticsJob[];
}

type Ctx = PluginContext<{ partTimeoutMs: number }>;

function sourcesOf(ctx: Ctx): Sources {
  const r = ctx.container.resolve<Registry>('diagnostics.registry');
  return {
    kernel: ctx.kernel,
    env: ctx.env,
    plugins: ctx.use(PluginOrderToken),
    store: ctx.use(StoreToken),
    cache: ctx.use(CacheToken),
    health: () => ctx.use(HealthToken).run(),
    contributed: r.contributed,
    jobs: r.jobs,
    tables: (ctx.optional(RetentionToken)?.kinds() ?? []).map((k) => ({ kind: k.kind, table: k.table })),
    partMs: ctx.config.partTimeoutMs,
  };
}

/** Writes the whole buffer and waits until the stream took it (the process may exit right after). */
function writeAll(out: NodeJS.WritableStream, data: Buffer): Promise<void> {
  return new Promise((done, fail) => out.write(data, (err) => (err ? fail(err) : done())));
}

/**
 * The diagnostics bundle (SPEC.md "Operations commands"): `svc diagnostics` writes a gzip tar to
 * standard output, and instance admins download the same from the admin API. It is written even
 * when the database is down; parts it cannot read say why. Never credentials, prompts, replies,
 * tool arguments, names, e-mail addresses or provider and tool-server addresses.
 */
export default definePlugin({
  name: 'diagnostics',
  dependsOn: ['admin-api'],
  config: Type.Object({ partTimeoutMs: Type.Integer({ minimum: 100, default: 5000 }) }),
  commands: [
    {
      name: 'diagnostics',
      summary: 'Write the diagnostics bundle (gzip tar) to standard output',
      usage: 'svc diagnostics > svc-diagnostics.tar.gz',
      options: {},
      async run(ctx, _args, out) {
        const data = await bundle(sourcesOf(ctx as Ctx));
        await writeAll(out, data);
        ctx.log.info('diagnostics.written', { via: 'command', bytes: data.length });
      },
      async whenBootFails({ kernel, env, plugins, error }, _args, out) {
        const partMs = Number((kernel.plugins.diagnostics?.config as { partTimeoutMs?: number } | undefined)?.partTimeoutMs ?? 5000);
        await writeAll(out, await bundle({ kernel, env, plugins, contributed: new Map(), jobs: [], tables: [], bootError: error, partMs }));
      },
    },
  ],
  register(ctx) {
    const registry: Registry = { contributed: new Map(), jobs: [] };
    ctx.container.register('diagnostics.registry', { useValue: registry });
    ctx.provide(DiagnosticsToken, {
      addSource: (source) => void registry.contributed.set(source.file, source),
      addJob: (job) => void registry.jobs.push(job),
    });
    ctx.use(AdminApiToken).route({
      method: 'GET',
      path: '/diagnostics',
      summary: 'Download the diagnostics bundle (gzip tar, the same as `svc diagnostics`)',
      tag: 'diagnostics',
      access: 'instance-admin',
      response: Type.Unknown({ description: 'application/gzip' }),
      async handler({ rc }) {
        const data = await bundle(sourcesOf(ctx));
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        rc.res.writeHead(200, {
          'content-type': 'application/gzip',
          'content-length': data.length,
          'content-disposition': `attachment; filename="svc-diagnostics-${stamp}.tar.gz"`,
          'cache-control': 'no-store',
        });
        rc.res.end(data);
        ctx.log.info('diagnostics.written', { via: 'admin_api', bytes: data.length });
        return undefined;
      },
    });
  },
});
