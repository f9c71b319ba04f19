/**
 * `node dist/bench/retention-probe.js`: what code not yet optimized by TurboFan keeps through
 * young-generation collections (kernel/lifecycle/node-flags.ts, `--invocation-count-for-turbofan`).
 *
 * A child process makes objects whose field is set to a closure over another object, the way
 * ioredis's `Command` holds its promise's resolve and reject, and drops each at once; V8's
 * `--trace-gc-nvp` says how much each scavenge found alive. Run three ways: V8's defaults (the
 * loop is hot at once, so TurboFan takes it within the first scavenges), without TurboFan (the
 * code stays in Ignition, Sparkplug and Maglev, as the service's per-request constructors did for
 * whole bench runs), and with the service's flag. Garbage that dies young leaves ~1 KB alive.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Holder {
  n: number;
  settle: (() => number) | null;
}

/** An object whose field is set to a closure over another object, then dropped. */
function make(i: number): Holder {
  const target = { i };
  const h: Holder = { n: i, settle: null };
  h.settle = () => target.i;
  return h;
}

async function child(): Promise<void> {
  let sink: Holder | undefined;
  let junk: number[] = [];
  for (let i = 0; i < 3_000_000; i++) {
    sink = make(i);
    junk = new Array<number>(64).fill(i);
    if (i % 10_000 === 0) await new Promise((r) => setImmediate(r));
  }
  void sink;
  void junk;
}

/** KB found alive by each scavenge, from V8's --trace-gc-nvp lines. */
function survivors(trace: string): number[] {
  const out: number[] = [];
  for (const line of trace.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    const m = / new_space_survived=(\d+)/.exec(line);
    if (m) out.push(Number(m[1]) / 1024);
  }
  return out;
}

function parent(): void {
  const self = fileURLToPath(import.meta.url);
  const runs: Array<[string, string[]]> = [
    ['V8 defaults', []],
    ['no TurboFan (Ignition, Sparkplug, Maglev only)', ['--no-turbofan']],
    ['service flag --invocation-count-for-turbofan=300', ['--invocation-count-for-turbofan=300']],
  ];
  console.log('KB alive at each young-generation collection (3,000,000 dropped objects; garbage that dies young keeps ~4 KB):\n');
  console.log('| node flags | scavenges | first three | the rest (median) |\n|---|---:|---|---:|');
  for (const [label, flags] of runs) {
    const r = spawnSync(process.execPath, [...flags, '--trace-gc-nvp', '--max-semi-space-size=32', '--min-semi-space-size=32', self, '--child'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`${label}: ${r.stderr}`);
    const kb = survivors(r.stdout);
    const rest = kb.slice(3).sort((a, b) => a - b);
    console.log(`| ${label} | ${kb.length} | ${kb.slice(0, 3).map((k) => k.toFixed(0)).join(', ')} | ${rest.length ? rest[Math.floor(rest.length / 2)]!.toFixed(0) : '—'} |`);
  }
}

if (process.argv.includes('--child')) await child();
else parent();
