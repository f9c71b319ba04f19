import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { root } from './child.js';
import { where } from './cpuprofile.js';
import { measure, scenarios, upstreamIds } from './scenarios.js';
import { smokeTest, startMockProcess, startSvcTarget } from './targets.js';

/**
 * `npm run bench -- --allocations`: what svc allocates per request, and where. svc runs alone
 * with alloc-probe.ts preloaded; after a warm-up, the sampling heap profiler counts every
 * allocation (garbage included) during one measurement of BENCH_SCENARIOS (default latency-1c,
 * BENCH_PROFILE_SECONDS long). Bytes per request is the sampled total over the requests served;
 * it does not depend on how busy the machine is, so it compares builds where timings cannot.
 *
 * Settings (environment): BENCH_PROFILE_SHAPE (embedded | scale-out), BENCH_PROFILE_TOP (30),
 * BENCH_ALLOC_INTERVAL (sampling interval in bytes, 4096), BENCH_ALLOC_PROMOTED=1 (count only what
 * outlived the young generation), BENCH_COMPARE_ROOT (another build).
 */
interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { callFrame: Frame; selfSize: number; children: Node[] }

const seconds = Number(process.env.BENCH_PROFILE_SECONDS || 8);
const shape = process.env.BENCH_PROFILE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
const top = Number(process.env.BENCH_PROFILE_TOP || 30);
const promoted = process.env.BENCH_ALLOC_PROMOTED === '1';
const chosen = scenarios.filter((s) => (process.env.BENCH_SCENARIOS || 'latency-1c').split(',').includes(s.id));

/** Self bytes by function, and by the innermost frame of svc's own code (dist/) above each allocation. */
function summarize(head: Node): { total: number; self: Map<string, number>; owners: Map<string, number> } {
  const self = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  const walk = (n: Node, owner: string): void => {
    const name = `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame)}`;
    const own = n.callFrame.url.includes('/dist/') && !n.callFrame.url.includes('/node_modules/') ? name : owner;
    if (n.selfSize > 0) {
      total += n.selfSize;
      self.set(name, (self.get(name) ?? 0) + n.selfSize);
      owners.set(own, (owners.get(own) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c, own);
  };
  walk(head, '(outside svc code)');
  return { total, self, owners };
}

function table(title: string, rows: Map<string, number>, total: number, requests: number): string {
  const sorted = [...rows].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [`### ${title}`, '', '| bytes / request | % | function |', '|---:|---:|---|', ...sorted.map(([k, v]) => `| ${Math.round(v / requests)} | ${((100 * v) / total).toFixed(1)} | \`${k}\` |`), ''].join('\n');
}

async function main(): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(root, 'bench/results', `${stamp}-allocations`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'svc.heapprofile');
  process.env.BENCH_ALLOC_FILE = file;
  const mock = await startMockProcess(dir);
  try {
    const svc = await startSvcTarget({ shape, mockPort: mock.port, logDir: dir, upstreamIds, root: process.env.BENCH_COMPARE_ROOT || undefined, nodeFlags: ['--import', join(root, 'dist/bench/alloc-probe.js')] });
    let requests = 0;
    try {
      await smokeTest(svc);
      for (const s of chosen) await measure(s, svc, 2, mock.child.pid);
      process.kill(svc.pid!, 'SIGHUP');
      for (let i = 0; i < 100 && !existsSync(`${file}.started`); i++) await sleep(20);
      for (const s of chosen) {
        const f = await measure(s, svc, seconds, mock.child.pid);
        requests += Math.round((f.rps ?? 0) * seconds);
      }
      process.kill(svc.pid!, 'SIGHUP');
      for (let i = 0; i < 250 && !existsSync(file); i++) await sleep(20);
      await sleep(200);
    } finally {
      await svc.stop();
    }
    const { total, self, owners } = summarize((JSON.parse(readFileSync(file, 'utf8')) as { head: Node }).head);
    const text = [
      `# Allocations of svc (${shape}) under ${chosen.map((s) => s.id).join(' + ')}, ${seconds} s`,
      '',
      `${requests} requests; **${Math.round(total / requests)} bytes per request ${promoted ? 'outlived the young generation' : 'were allocated (garbage included)'}** (sampled).`,
      `Profile: bench/results/${stamp}-allocations/svc.heapprofile (Chrome DevTools → Memory → load).`,
      '',
      table('By function (self)', self, total, requests),
      table('By the innermost svc function above the allocation', owners, total, requests),
    ].join('\n');
    writeFileSync(join(dir, 'summary.md'), text);
    process.stdout.write(`${text}\nWritten: bench/results/${stamp}-allocations/summary.md\n`);
  } finally {
    await mock.child.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench allocations: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
