import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleAllocations, type AllocationSample, type HeapNode } from './alloc.js';
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
 * outlived the young generation), BENCH_COMPARE_ROOT (another build), BENCH_WARM_SCENARIOS (scenarios
 * run first, BENCH_WARM_SECONDS each: a process that has served a saturation run keeps more, as the
 * long-running process of `npm run bench` does).
 */
const seconds = Number(process.env.BENCH_PROFILE_SECONDS || 8);
const shape = process.env.BENCH_PROFILE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
const top = Number(process.env.BENCH_PROFILE_TOP || 30);
const promoted = process.env.BENCH_ALLOC_PROMOTED === '1';
const chosen = scenarios.filter((s) => (process.env.BENCH_SCENARIOS || 'latency-1c').split(',').includes(s.id));
const warm = scenarios.filter((s) => (process.env.BENCH_WARM_SCENARIOS || '').split(',').includes(s.id));
const warmSeconds = Number(process.env.BENCH_WARM_SECONDS || 10);

/** Self bytes by function, and by the innermost frame of svc's own code (dist/) above each allocation. */
function summarize(head: HeapNode): { total: number; self: Map<string, number>; owners: Map<string, number> } {
  const self = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  const walk = (n: HeapNode, owner: string): void => {
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
  const mock = await startMockProcess(dir);
  try {
    const svc = await startSvcTarget({ shape, mockPort: mock.port, logDir: dir, upstreamIds, root: process.env.BENCH_COMPARE_ROOT || undefined });
    const samples: AllocationSample[] = [];
    try {
      await smokeTest(svc);
      for (const s of warm) await measure(s, svc, warmSeconds, mock.child.pid);
      for (const s of chosen) await measure(s, svc, 2, mock.child.pid);
      for (const s of chosen) samples.push(await sampleAllocations(svc, s, seconds, mock.child.pid, promoted ? 'promoted' : 'allocated'));
    } finally {
      await svc.stop();
    }
    const requests = samples.reduce((n, s) => n + s.requests, 0);
    const head: HeapNode = { callFrame: { functionName: '(all)', url: '', lineNumber: 0 }, selfSize: 0, children: samples.map((s) => s.head) };
    const { total, self, owners } = summarize(head);
    const text = [
      `# Allocations of svc (${shape}) under ${chosen.map((s) => s.id).join(' + ')}, ${seconds} s`,
      '',
      `${requests} requests; **${Math.round(total / requests)} bytes per request ${promoted ? 'outlived the young generation' : 'were allocated (garbage included)'}** (sampled).`,
      `Profile: ${svc.allocFile} (Chrome DevTools → Memory → load).`,
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
