import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './child.js';

/** Node flags and environment that load the event-loop probe (eld-probe.ts) into a gateway. */
export function eldProbe(logDir: string, name: string): { flags: string[]; env: NodeJS.ProcessEnv } {
  return { flags: ['--import', join(root, 'dist/bench/eld-probe.js')], env: { BENCH_ELD_FILE: join(logDir, `${name}.eld.json`) } };
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Asks the probe in `pid` for the event-loop delay since its last signal (and resets it). Undefined
 * when the process has no probe or does not answer within a second.
 */
export async function readEld(pid: number, file: string): Promise<{ p99: number; max: number } | undefined> {
  rmSync(file, { force: true });
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return undefined;
  }
  for (let i = 0; i < 50; i++) {
    await sleep(20);
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as { p99: number; max: number };
    } catch {
      // not written yet (or half written): try again
    }
  }
  return undefined;
}
