import autocannon from 'autocannon';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './child.js';
import { requestBody, upstreamIds } from './scenarios.js';
import { smokeTest, startBare, startMockProcess, startSvcTarget, type Target } from './targets.js';

/**
 * `npm run bench -- --survival`: how much of what a gateway allocates survives each young-generation
 * collection (scavenge) under concurrency, read from V8's own `--trace-gc-nvp` lines. A share well
 * above the bare proxy's means something old keeps young request objects alive (bench/README.md
 * "Sixth look": a Map's replaced hash table did); halving it halves the old generation's growth,
 * so full collections and peak RSS. Unlike timings, the share does not depend on how busy the
 * machine is. Settings: SURVIVAL_CONNECTIONS (64), SURVIVAL_SECONDS (5), SURVIVAL_PATH
 * (/v1/chat/completions; GET for any other), BENCH_PROFILE_SHAPE, BENCH_SVC_CONFIG (an ablation),
 * BENCH_SVC_NODE_FLAGS.
 */
const connections = Number(process.env.SURVIVAL_CONNECTIONS || 64);
const seconds = Number(process.env.SURVIVAL_SECONDS || 5);
const path = process.env.SURVIVAL_PATH || '/v1/chat/completions';
const shape = process.env.BENCH_PROFILE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
const trace = ['--trace-gc-nvp'];

/** Runs the load; resolves with the requests completed and the failed ones. */
function load(t: Target, duration: number): Promise<{ total: number; failed: number }> {
  const post = path === '/v1/chat/completions';
  return new Promise((resolve, reject) => {
    autocannon(
      { url: t.url + path, method: post ? 'POST' : 'GET', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}` }, body: post ? requestBody(t.model(upstreamIds[0]!), false) : undefined, connections, duration },
      (err, r) => (err ? reject(err) : resolve({ total: r.requests.total, failed: r.errors + r.timeouts + r.non2xx })),
    );
  });
}

/** Sums the scavenges V8 logged after `from` characters of `log`. */
function scavenges(log: string, from: number): { count: number; allocated: number; survived: number; promoted: number } {
  const out = { count: 0, allocated: 0, survived: 0, promoted: 0 };
  for (const line of readFileSync(log, 'utf8').slice(from).split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    const field = (k: string): number => Number(new RegExp(` ${k}=(\\d+)`).exec(line)?.[1] ?? 0);
    out.count++;
    out.allocated += field('allocated');
    out.survived += field('new_space_survived');
    out.promoted += field('promoted');
  }
  return out;
}

async function measure(t: Target, log: string): Promise<string> {
  await load(t, 1);
  const from = readFileSync(log, 'utf8').length;
  const r = await load(t, seconds);
  const s = scavenges(log, from);
  const n = r.total;
  const kb = (b: number): string => (b / n / 1024).toFixed(2);
  return `| ${t.name} | ${n} | ${r.failed} | ${s.count} | ${kb(s.allocated)} | ${s.allocated ? ((100 * s.survived) / s.allocated).toFixed(1) : '—'} % | ${kb(s.promoted)} |`;
}

async function main(): Promise<void> {
  const dir = join(root, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-survival`);
  mkdirSync(dir, { recursive: true });
  const mock = await startMockProcess(dir);
  const rows: string[] = [];
  try {
    const bare = await startBare(mock.port, dir, trace);
    try {
      if (path === '/v1/chat/completions') rows.push(await measure(bare, join(dir, 'bare-proxy.log')));
    } finally {
      await bare.stop();
    }
    const svcFlags = [...trace, ...(process.env.BENCH_SVC_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)];
    const config = process.env.BENCH_SVC_CONFIG ? (JSON.parse(process.env.BENCH_SVC_CONFIG) as Record<string, unknown>) : undefined;
    const svc = await startSvcTarget({ shape, mockPort: mock.port, logDir: dir, upstreamIds, nodeFlags: svcFlags, config, root: process.env.BENCH_COMPARE_ROOT || undefined });
    try {
      await smokeTest(svc);
      rows.push(await measure(svc, join(dir, `${svc.name}.log`)));
    } finally {
      await svc.stop();
    }
  } finally {
    await mock.child.stop();
  }
  process.stdout.write(
    [`# Survival of young-generation collections: ${path}, ${connections} connections, ${seconds} s`, '', '| target | requests | failed | scavenges | KB allocated / request | surviving each scavenge | KB promoted / request |', '|---|---:|---:|---:|---:|---:|---:|', ...rows, '', `Logs: ${dir}`, ''].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench survival: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
