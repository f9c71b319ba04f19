import { readFileSync } from 'node:fs';
import type { CachePort, DiagnosticsJob, DiagnosticsSource, HealthReport, KernelConfig, Store } from '../../kernel/index.js';
import { cachePart, countsPart, databasePart, failedPart } from './data.js';
import { part, reason, within } from './safe.js';
import { recoveryKeysPart, settingsPart } from './settings.js';

/** What a bundle is made from. A service that could not boot has no store, health or jobs. */
export interface Sources {
  kernel: KernelConfig;
  env: NodeJS.ProcessEnv;
  plugins: readonly string[];
  store?: Store;
  cache?: CachePort;
  health?: () => Promise<HealthReport>;
  contributed: Map<string, DiagnosticsSource>;
  jobs: DiagnosticsJob[];
  /** Tables of registered retention kinds, counted too (kinds added by later plugins). */
  tables: Array<{ kind: string; table: string }>;
  bootError?: Error;
  /** Per-part time limit. */
  partMs: number;
}

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string; dependencies: Record<string, string> };

/** Defaults for parts whose owner is not built or enabled (see kernel/contracts/diagnostics.ts). */
const defaults: Record<string, unknown> = {
  'sandbox.json': {
    sandbox: { configured: false, reachable: null, note: 'no sandbox service is connected to this service' },
    egress_proxy: { configured: false, reachable: null, note: 'no egress proxy is connected to this service' },
  },
  'price-updates.json': { enabled: false, state: 'off', last_check: null, last_result: null },
};

async function health(s: Sources): Promise<unknown> {
  if (s.health) return s.health();
  const cache = await part('cache unreachable', s.partMs, async () => (await cachePart(s.kernel), { status: 'ok' }));
  return {
    status: 'down',
    checks: {
      database: { status: 'down', error_code: reason(s.bootError) === 'timeout' ? 'timeout' : 'unreachable', reason: reason(s.bootError) },
      cache: (cache as { unavailable?: string }).unavailable ? { status: 'down', error_code: 'unreachable' } : { status: 'ok' },
    },
  };
}

/** Every file of the bundle as JSON-ready data, each collected on its own so one failure spoils nothing else. */
export async function collect(s: Sources): Promise<Record<string, unknown>> {
  const noStore = { unavailable: `database unreachable (${reason(s.bootError)})` };
  const db = <T>(what: string, work: (store: Store) => Promise<T>) => (s.store ? part(what, s.partMs, () => work(s.store!)) : Promise.resolve(noStore));
  const files: Record<string, unknown> = {
    'versions.json': { svc: pkg.version, node: process.version, platform: process.platform, arch: process.arch, dependencies: pkg.dependencies },
    'health.json': await part('health checks failed', s.partMs * 2, () => health(s)),
    'settings.json': settingsPart(s.kernel, s.env),
    'recovery-keys.json': await part('recovery keys unreadable', s.partMs, async () => recoveryKeysPart(s.kernel, s.env)),
    'database.json': await db('database unreachable', (store) => databasePart(store, s.kernel)),
    'cache.json': await part('cache unreachable', s.partMs, () => cachePart(s.kernel)),
    'counts.json': await db('database unreachable', (store) => countsPart(store, s.tables)),
    'jobs.json': !s.store ? noStore : {
      jobs: await Promise.all(
        s.jobs.map(async (j) => ({ name: j.name, schedule: j.schedule, last_run: s.store ? await part('last run unreadable', s.partMs, () => j.lastRun()) : noStore })),
      ),
    },
    'plugins.json': { order: s.plugins },
    'failed-requests.json': await db('database unreachable', (store) => failedPart(store)),
  };
  for (const [file, fallback] of Object.entries(defaults)) files[file] = fallback;
  for (const [file, source] of s.contributed) files[file] = await part(`${file} could not be collected`, s.partMs, () => source.collect());
  files['manifest.json'] = {
    created_at: new Date().toISOString(),
    svc: pkg.version,
    files: Object.keys(files).sort(),
    unavailable: Object.entries(files).filter(([, v]) => (v as { unavailable?: string })?.unavailable).map(([k]) => k)
      .sort(),
  };
  return files;
}

/** The bundle: a gzip tar of the collected files under `svc-diagnostics/`. */
export async function bundle(s: Sources): Promise<Buffer> {
  const files = await collect(s);
  // archiver and its dependencies load only when a bundle is made, not in every running service.
  const { TarArchive } = await import('archiver');
  const archive = new TarArchive({ gzip: true });
  const chunks: Buffer[] = [];
  archive.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((done, fail) => {
    archive.on('end', done);
    archive.on('error', fail);
  });
  const date = new Date();
  for (const [name, data] of Object.entries(files)) archive.append(`${JSON.stringify(data, null, 2)}\n`, { name: `svc-diagnostics/${name}`, date });
  await within(s.partMs * 4, async () => {
    await archive.finalize();
    await ended;
  });
  return Buffer.concat(chunks);
}
