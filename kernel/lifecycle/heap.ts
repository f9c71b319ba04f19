import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What compacting the heap gave back. */
export interface Compaction {
  rss_mb_before: number;
  rss_mb_after: number;
  young_mb_before: number;
  young_mb_after: number;
  duration_ms: number;
}

const MB = 1024 * 1024;

function rssMb(): number {
  // VmRSS (Linux); elsewhere Node's own figure.
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Math.round(Number(m[1]) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.memoryUsage.rss() / MB);
}

const youngMb = (): number => Math.round((getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / MB);

/**
 * Runs V8's "last resort" full collection once: it collects everything unreachable, compacts the
 * old generation and shrinks the young one back to its smallest size. Start-up (plugins importing
 * their modules, snapshots loading, migrations) grows the young generation to its limit (2 × 16
 * MB with `--max-semi-space-size=16`) and leaves dead objects in the old one; nothing shrinks them
 * on its own while the process is idle. Measured on an idle embedded instance: 175 → 136 MB RSS
 * (bench/README.md "Memory"). The service calls this before it listens, so no request waits on it.
 *
 * The collector is reached through a fresh context with `--expose-gc` set for it alone: `gc` is
 * never put on the service's own global object.
 */
export function compactHeap(): Compaction {
  const rss_mb_before = rssMb();
  const young_mb_before = youngMb();
  const started = performance.now();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return { rss_mb_before, rss_mb_after: rssMb(), young_mb_before, young_mb_after: youngMb(), duration_ms: Math.round(performance.now() - started) };
}
