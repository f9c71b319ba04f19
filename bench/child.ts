import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The package root (dist/bench/ is two levels down). */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** One child process of the benchmark, its output going to a log file. */
export interface Child {
  proc: ChildProcess;
  pid: number;
  log: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its log (for start-up failures). */
  tail(lines?: number): string;
}

/**
 * Starts `node <args>` with stdout and stderr going to `log` (a file, so a full pipe never stalls
 * the child; emptied first unless `append`), in `cwd` (the package root unless told otherwise).
 */
export function startNode(args: string[], env: NodeJS.ProcessEnv, log: string, cwd = root, append = false): Child {
  const fd = openSync(log, append ? 'a' : 'w');
  const proc = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  return {
    proc,
    pid: proc.pid ?? 0,
    log,
    tail: (lines = 15) => {
      try {
        return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    stop: async (graceMs = 25_000) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Waits until `probe` resolves true, failing early when the child exits and after `timeoutMs`.
 */
export async function waitReady(child: Child, what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${what} exited (${child.proc.exitCode ?? child.proc.signalCode}) before it was ready:\n${child.tail()}`);
    }
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  await child.stop(2000);
  throw new Error(`${what} was not ready after ${timeoutMs} ms:\n${child.tail()}`);
}

/** The port the child printed in its `ready <port>` line, once it did. */
export const readyPort = (child: Child): number | undefined => {
  const m = /^ready (\d+)/m.exec(child.tail(20));
  return m ? Number(m[1]) : undefined;
};

/** A probe that is true once the child printed `ready <port>`. */
export const readyLine = (child: Child) => async (): Promise<boolean> => readyPort(child) !== undefined;
