import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Service } from '../../../kernel/lifecycle/service.js';
import { startService, MemorySink, type Backing, type TestService } from '../../support/harness.js';
import { Admin, adminEnv } from '../../support/provision.js';

/** The plugins a catalog test runs with: the real admin API, identity, providers and the catalog. */
export function catalogPlugins(): Record<string, unknown> {
  return { 'admin-api': {}, identity: {}, providers: {}, catalog: {} };
}

export interface CatalogService extends TestService {
  admin: Admin;
}

/** One recovery key for every replica of a test run (scale-out refuses to store keys without one). */
export const sharedRecoveryKeys = recoveryKey('v1');

/**
 * Boots the service with the catalog and signs the bootstrapped instance admin in. In the
 * scale-out shape SVC_RECOVERY_KEYS is set unless `env` says otherwise.
 */
export async function startCatalog(backing: Backing, env: NodeJS.ProcessEnv = {}, overrides: Record<string, unknown> = {}): Promise<CatalogService> {
  const keys = backing.shape === 'scale-out' ? { SVC_RECOVERY_KEYS: sharedRecoveryKeys } : {};
  const svc = await startService({ backing, env: { ...adminEnv, ...keys, ...env }, overrides: { ...overrides, plugins: { ...catalogPlugins(), ...(overrides.plugins as object | undefined) } } });
  try {
    return { ...svc, admin: await Admin.signIn(svc.url) };
  } catch (err) {
    await svc.stop();
    throw err;
  }
}

/** A service on the backing that is not started yet (boot failures, commands), as the harness would make it. */
export function newService(backing: Backing, env: NodeJS.ProcessEnv = {}): { service: Service; logs: MemorySink } {
  const logs = new MemorySink();
  const overrides = {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    log: { level: 'debug' },
    dataDir: backing.dataDir,
    database: backing.databaseUrl ? { url: backing.databaseUrl } : {},
    cache: backing.redisUrl ? { url: backing.redisUrl, prefix: backing.redisPrefix } : {},
    plugins: catalogPlugins(),
  };
  return { service: new Service({ env: { ...env }, overrides, logSink: logs }), logs };
}

/** Runs an `svc` subcommand the way bin/svc.ts does, against the backing; returns what it printed. */
export async function runCommand(backing: Backing, words: string[], env: NodeJS.ProcessEnv = {}): Promise<{ out: string; logs: MemorySink }> {
  const { service, logs } = newService(backing, env);
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString('utf8');
      done();
    },
  });
  try {
    await service.runCommand(words, sink);
  } catch (err) {
    throw Object.assign(err as Error, { out });
  }
  return { out, logs };
}

/** Polls `probe` until it returns true or `ms` passes. */
export async function eventually(probe: () => boolean | Promise<boolean>, ms = 1000): Promise<boolean> {
  const until = Date.now() + ms;
  do {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 20));
  } while (Date.now() < until);
  return probe();
}

/** A fresh recovery key: `<version>:<base64 of 32 random bytes>`. */
export function recoveryKey(version: string): string {
  return `${version}:${randomBytes(32).toString('base64')}`;
}
