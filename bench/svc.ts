import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, root, startNode, waitReady, type Child } from './child.js';
import type { ScaleOutBacking } from './backing.js';
import { serviceNodeFlags } from '../kernel/lifecycle/node-flags.js';

/** The instance admin the service creates at start (SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD). */
export const benchAdmin = { email: 'bench@example.test', password: `bench-${randomBytes(9).toString('hex')}` };

/** Per-person rate limit the benchmark configures: high enough never to refuse. */
export const benchRateLimit = { requests: 1_000_000_000, windowSeconds: 60 };

/** Governance plugins, most first; the start falls back to fewer when one is missing or fails to boot. */
const governanceSets: string[][] = [['budgets', 'rate-limit'], ['rate-limit'], []];

export interface SvcProcess {
  child: Child;
  url: string;
  /** SVC_DATA_DIR: the embedded shape's SQLite file is `svc.sqlite` in it. */
  dataDir: string;
  /** Plugins the service reported at start (its `api.started` log event). */
  plugins: string[];
  /** Start attempts that failed, with the reason (a governance plugin that did not boot). */
  fallbacks: string[];
  stop(): Promise<void>;
}

export interface SvcOptions {
  backing?: ScaleOutBacking;
  /** Folder for the log file (and CPU profiles). */
  logDir: string;
  name: string;
  /** Package root to run svc from (default: this one); BENCH_COMPARE_ROOT runs a second build. */
  root?: string;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir', dir]; BENCH_SVC_NODE_FLAGS adds more (space-separated). */
  nodeFlags?: string[];
  /** Extra environment (the event-loop probe's file). */
  env?: NodeJS.ProcessEnv;
  /** Config merged over the benchmark's (after BENCH_SVC_CONFIG), e.g. a low rate limit for a flood. */
  config?: Json;
}

const built = (from: string, plugin: string): boolean => existsSync(join(from, 'dist/plugins', plugin, 'index.js'));

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const merge = (a: unknown, b: unknown): unknown =>
  isObject(a) && isObject(b) ? Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, k in b ? merge(a[k], b[k]) : a[k]])) : b;

/**
 * A config experiment from the environment: JSON (inline or a file) merged over the benchmark's
 * config; undefined when the variable is unset. BENCH_SVC_CONFIG applies to every svc target,
 * BENCH_COMPARE_CONFIG (run.ts) to svc-compare only.
 */
export function configFromEnv(name: string): Json | undefined {
  const raw = process.env[name]?.trim();
  if (!raw) return undefined;
  const parsed: unknown = JSON.parse(raw.startsWith('{') ? raw : readFileSync(raw, 'utf8'));
  if (!isObject(parsed)) throw new Error(`${name} is not a JSON object`);
  return parsed;
}

/**
 * The operator config file (SVC_CONFIG): the wanted governance plugins on, their limits set very
 * high; the others of governanceSets[0] explicitly off (config/default.json may list them).
 */
function configFor(plugins: string[], extra: Json = {}): Json {
  const entries: Json = {};
  for (const p of governanceSets[0]!) entries[p] = plugins.includes(p) ? {} : { enabled: false };
  if (plugins.includes('rate-limit')) entries['rate-limit'] = { config: benchRateLimit };
  return merge(merge({ plugins: entries }, configFromEnv('BENCH_SVC_CONFIG') ?? {}), extra) as Json;
}

function envFor(port: number, dataDir: string, configFile: string, backing?: ScaleOutBacking): NodeJS.ProcessEnv {
  // Inherited SVC_* settings would change what is measured: start from the rest of the environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  return {
    ...env,
    SVC_HOST: '127.0.0.1',
    SVC_PORT: String(port),
    SVC_DATA_DIR: dataDir,
    SVC_CONFIG: configFile,
    SVC_LOG_LEVEL: 'info',
    SVC_ADMIN_EMAIL: benchAdmin.email,
    SVC_ADMIN_PASSWORD: benchAdmin.password,
    SVC_RECOVERY_KEYS: `v1:${randomBytes(32).toString('base64')}`,
    ...(backing ? { SVC_DATABASE_URL: backing.databaseUrl, SVC_REDIS_URL: backing.redisUrl, SVC_REDIS_PREFIX: backing.redisPrefix } : {}),
  };
}

/** The plugin list from the service's `api.started` log line past byte `from`, once it is there. */
function startedPlugins(log: string, from: number): string[] | undefined {
  let text = '';
  try {
    text = readFileSync(log).subarray(from).toString('utf8');
  } catch {
    return undefined;
  }
  let found: string[] | undefined;
  for (const line of text.split('\n')) {
    if (!line.includes('api.started')) continue;
    try {
      const e = JSON.parse(line) as { event?: string; plugins?: string[] };
      if (e.event === 'api.started') found = e.plugins ?? [];
    } catch {
      // not a JSON line
    }
  }
  return found;
}

async function attempt(plugins: string[], o: SvcOptions, dataDir: string, log: string): Promise<SvcProcess> {
  const port = await freePort();
  const configFile = join(dataDir, 'bench-config.json');
  writeFileSync(configFile, JSON.stringify(configFor(plugins, o.config), null, 2));
  // The flags the service ships with (Dockerfile, npm start), so the bench measures what runs, plus
  // BENCH_SVC_NODE_FLAGS; svc-compare gets exactly BENCH_COMPARE_NODE_FLAGS when that is set (an
  // A/B of node flags in one run).
  const own = o.root && process.env.BENCH_COMPARE_NODE_FLAGS !== undefined ? process.env.BENCH_COMPARE_NODE_FLAGS.split(' ') : [...serviceNodeFlags, ...(process.env.BENCH_SVC_NODE_FLAGS?.split(' ') ?? [])];
  const flags = [...own.filter(Boolean), ...(o.nodeFlags ?? [])];
  // Appended: a failed attempt's reason stays in the log above this attempt's lines.
  const from = existsSync(log) ? statSync(log).size : 0;
  const child = startNode([...flags, 'dist/bin/svc.js', 'serve'], { ...envFor(port, dataDir, configFile, o.backing), ...o.env }, log, o.root ?? root, true);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `svc (${o.name}, plugins +${plugins.join(',') || 'none'})`, async () => {
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    return res.status === 200 && startedPlugins(log, from) !== undefined;
  });
  return { child, url, dataDir, plugins: startedPlugins(log, from) ?? [], fallbacks: [], stop: () => child.stop() };
}

/**
 * Starts `node dist/bin/svc.js serve` on 127.0.0.1 with the governance plugins that are built and
 * boot: budgets and rate-limit first; without them when the service will not start with them.
 */
export async function startSvc(o: SvcOptions): Promise<SvcProcess> {
  const fallbacks: string[] = [];
  for (const wanted of governanceSets) {
    if (!wanted.every((p) => built(o.root ?? root, p))) {
      fallbacks.push(`${wanted.join(' + ')}: not built (dist/plugins/<name>/index.js missing)`);
      continue;
    }
    const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${o.name}-`));
    const log = join(o.logDir, `${o.name}.log`);
    try {
      const svc = await attempt(wanted, o, dataDir, log);
      return {
        ...svc,
        fallbacks,
        stop: async () => {
          await svc.child.stop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      rmSync(dataDir, { recursive: true, force: true });
      if (wanted.length === 0) throw err;
      fallbacks.push(`${wanted.join(' + ')}: ${(err as Error).message.split('\n').slice(0, 4).join(' | ')}`);
    }
  }
  throw new Error('svc did not start');
}
