import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Service, type ServiceOptions } from '../../kernel/lifecycle/service.js';
import type { LogSink } from '../../kernel/log/logger.js';

export type Shape = 'embedded' | 'scale-out';

/** A fixed test recovery key (never used outside tests). */
export const testRecoveryKeys = `v1:${Buffer.alloc(32, 7).toString('base64')}`;

/** The shape this run tests: `npm test` runs every suite once per shape (SVC_TEST_SHAPE). */
export const shape: Shape = process.env.SVC_TEST_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';

export const postgresAdminUrl = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const redisUrl = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Everything one test environment's instances share: a fresh database and cache prefix. */
export interface Backing {
  shape: Shape;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix: string;
  drop(): Promise<void>;
}

/** A fresh SQLite folder, or a fresh PostgreSQL database plus a Redis key prefix. */
export async function createBacking(which: Shape = shape): Promise<Backing> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const tag = randomBytes(5).toString('hex');
  const redisPrefix = `svct:${tag}:`;
  if (which === 'embedded') {
    return { shape: which, dataDir, redisPrefix, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const db = `svc_t_${tag}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`create database ${db}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${db}`;
  return {
    shape: which,
    dataDir,
    databaseUrl: url.toString(),
    redisUrl,
    redisPrefix,
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const c = new pg.Client({ connectionString: postgresAdminUrl });
      await c.connect();
      await c.query(`drop database if exists ${db} with (force)`);
      await c.end();
    },
  };
}

/** Log lines of one instance, kept for assertions (e.g. that a canary secret never appears). */
export class MemorySink implements LogSink {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  events(name: string): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.event === name);
  }
  get text(): string {
    return this.lines.join('');
  }
}

export interface TestService {
  service: Service;
  url: string;
  logs: MemorySink;
  stop(): Promise<void>;
}

export interface StartOptions {
  backing: Backing;
  /** Merged over the test defaults (port 0, host 127.0.0.1, the backing's stores). */
  overrides?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
}

/** Boots the real service in this process on 127.0.0.1 and a free port. */
export async function startService(opts: StartOptions): Promise<TestService> {
  const { backing } = opts;
  const logs = new MemorySink();
  const base = {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    log: { level: 'debug' },
    dataDir: backing.dataDir,
    database: backing.databaseUrl ? { url: backing.databaseUrl } : {},
    cache: backing.redisUrl ? { url: backing.redisUrl, prefix: backing.redisPrefix } : {},
  };
  // Scale-out refuses to store provider keys without a recovery key (catalog plugin): tests get one.
  const env: NodeJS.ProcessEnv = backing.databaseUrl ? { SVC_RECOVERY_KEYS: testRecoveryKeys, ...opts.env } : { ...opts.env };
  const options: ServiceOptions = { env, overrides: deepAssign(base, opts.overrides ?? {}), logSink: logs };
  const service = new Service(options);
  await service.start();
  return { service, url: `http://127.0.0.1:${service.port}`, logs, stop: () => service.stop() };
}

function deepAssign(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] = cur && typeof cur === 'object' && !Array.isArray(cur) && v && typeof v === 'object' && !Array.isArray(v) ? deepAssign(cur as Record<string, unknown>, v as Record<string, unknown>) : v;
  }
  return out;
}

/**
 * One service (on a fresh backing) for a whole uvu suite: started before its first test and
 * stopped after its last. Returns a getter for it.
 *
 * @example
 * const svc = serviceForSuite(test);
 * test('…', async () => fetch(`${svc().url}/healthz`));
 */
export function serviceForSuite(test: { before(fn: () => Promise<void>): void; after(fn: () => Promise<void>): void }, overrides?: Record<string, unknown>): () => TestService {
  let backing: Backing | undefined;
  let svc: TestService | undefined;
  test.before(async () => {
    backing = await createBacking();
    svc = await startService({ backing, overrides });
  });
  test.after(async () => {
    await svc?.stop();
    await backing?.drop();
  });
  return () => svc!;
}
