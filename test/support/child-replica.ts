import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testRecoveryKeys, type Backing } from './harness.js';

/** The package root (this file runs from dist/test/support/). */
const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The real service (`node dist/bin/svc.js serve`) as a child process on the backing, so a test
 * can kill it with SIGKILL at any moment and start another replica, as an orchestrator would.
 */
export interface ChildReplica {
  url: string;
  pid: number;
  /** Its JSON log lines so far. */
  lines: string[];
  /** SIGKILL: no shutdown, no flush; resolves when the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful stop); resolves when the process is gone. */
  stop(): Promise<void>;
}

let seq = 0;

/** Starts a replica whose config is `overrides` over the backing's stores; resolves once it listens. */
export async function startReplica(backing: Backing, overrides: Record<string, unknown>, timeoutMs = 30_000, extraEnv: NodeJS.ProcessEnv = {}): Promise<ChildReplica> {
  const config = join(backing.dataDir, `replica-${process.pid}-${++seq}.json`);
  writeFileSync(config, JSON.stringify({ ...overrides, server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 }, dataDir: backing.dataDir }));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, SVC_CONFIG: config, SVC_LOG_LEVEL: 'info', ...extraEnv };
  if (backing.databaseUrl) Object.assign(env, { SVC_DATABASE_URL: backing.databaseUrl, SVC_RECOVERY_KEYS: testRecoveryKeys });
  if (backing.redisUrl) Object.assign(env, { SVC_REDIS_URL: backing.redisUrl, SVC_REDIS_PREFIX: backing.redisPrefix });
  const proc: ChildProcess = spawn(process.execPath, ['--enable-source-maps', 'dist/bin/svc.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica did not start in ${timeoutMs} ms: ${stderr.slice(-500)}`)), timeoutMs);
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.stdout!.on('data', (c: Buffer) => {
      partial += c.toString();
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (line.includes('"api.started"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { port: number }).port);
        }
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited (${code}) before it started: ${stderr.slice(-500)}`));
    });
  });
  const gone = async (signal: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return { url: `http://127.0.0.1:${port}`, pid: proc.pid!, lines, kill9: () => gone('SIGKILL'), stop: () => gone('SIGTERM') };
}
