import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { root } from './child.js';
import type { RunData } from './data.js';
import { startPortkey } from './portkey.js';
import { peakRssMb, rssMb } from './proc.js';
import { burstBodies, burstMb, hostileBurst } from './burst.js';
import { sampleBoth } from './alloc.js';
import { fullLayerName, layerScenario, layersAlone, partialLayers } from './layers.js';
import { markdown } from './report.js';
import { sustainedRate } from './sustain.js';
import { measure, scenarios, upstreamIds, type Figures } from './scenarios.js';
import { directTarget, smokeTest, startBare, startMockProcess, startSvcTarget, type Target, type TargetName } from './targets.js';
import { configFromEnv } from './svc.js';

/**
 * `npm run bench`: starts the mock upstream, the bare proxy, Portkey and svc in both shapes on 127.0.0.1,
 * runs every scenario against each target in turn (direct → bare → svc-embedded → svc-scale-out,
 * repeated), then writes bench/results/<time>.md and .json and prints the markdown.
 *
 * Settings (environment): BENCH_SECONDS (4) per measurement, BENCH_REPS (3), BENCH_WARMUP_SECONDS
 * (1), BENCH_IDLE_SECONDS (12: quiet time before idle RSS is read), BENCH_TARGETS and BENCH_SCENARIOS (comma lists, default all), BENCH_ALLOC_SECONDS (3; 0 skips
 * the allocation figures), BENCH_SUSTAIN=0 (skips the sustained-rate search; BENCH_SUSTAIN_SECONDS
 * per step, 3), BENCH_BURST_SECONDS (30; 0 skips the hostile burst); BENCH_COMPARE_ROOT adds
 * target `svc-compare`: svc run from another built checkout (BENCH_COMPARE_SHAPE, default
 * embedded; BENCH_COMPARE_CONFIG, JSON merged over its config only: an A/B of configuration on one
 * build), measured in the same interleaved run for an A/B comparison. With `--profile` it runs
 * profile.ts instead (a CPU profile of svc under load).
 */
const envNumber = (name: string, fallback: number): number => (Number.isFinite(Number(process.env[name])) && process.env[name] ? Number(process.env[name]) : fallback);
const list = (name: string): string[] | undefined => process.env[name]?.split(',').map((s) => s.trim()).filter(Boolean);

const burstSeconds = envNumber('BENCH_BURST_SECONDS', 30);
const allocSeconds = envNumber('BENCH_ALLOC_SECONDS', 3);
/**
 * How long every gateway sits idle after provisioning before its idle RSS is read: V8's memory
 * reducer starts 8 s after the last major collection of a quiet process
 * (--gc-memory-reducer-start-delay-ms) and gives back what provisioning's garbage grew. Read at
 * once, the figure is the tail of the provisioning traffic, not an idle process (~25 MB more).
 */
const idleSeconds = envNumber('BENCH_IDLE_SECONDS', 12);
const settings = { seconds: envNumber('BENCH_SECONDS', 4), reps: envNumber('BENCH_REPS', 3), warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1), idleSeconds };
const wantedTargets = list('BENCH_TARGETS');
const wanted = (t: TargetName): boolean => !wantedTargets || wantedTargets.includes(t);
const chosenScenarios = scenarios.filter((s) => !list('BENCH_SCENARIOS') || list('BENCH_SCENARIOS')!.includes(s.id));

const log = (line: string): void => void process.stdout.write(`${line}\n`);

/** Starts every wanted target into `targets` (so the caller stops those started even if a later one fails). */
async function startTargets(mockPort: number, logDir: string, skipped: string[], targets: Target[]): Promise<void> {
  if (wanted('direct')) targets.push(directTarget(mockPort));
  if (wanted('bare')) targets.push(await startBare(mockPort, logDir));
  if (wanted('portkey')) {
    try {
      targets.push(await startPortkey(mockPort, logDir, log));
    } catch (err) {
      skipped.push(`portkey: ${(err as Error).message.split('\n')[0]}`);
      log(`! portkey skipped: ${(err as Error).message}`);
    }
  }
  for (const shape of ['embedded', 'scale-out'] as const) {
    if (!wanted(`svc-${shape}`)) continue;
    try {
      targets.push(await startSvcTarget({ shape, mockPort, logDir, upstreamIds }));
    } catch (err) {
      if (shape === 'embedded') throw err;
      skipped.push(`svc-scale-out (PostgreSQL + Redis): ${(err as Error).message.split('\n')[0]}`);
      log(`! svc-scale-out skipped: ${(err as Error).message}`);
    }
  }
  const compare = process.env.BENCH_COMPARE_ROOT;
  if (compare) {
    const shape = process.env.BENCH_COMPARE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
    const config = configFromEnv('BENCH_COMPARE_CONFIG');
    targets.push(await startSvcTarget({ shape, mockPort, logDir, upstreamIds, root: compare, config }));
    targets.at(-1)!.governance!.push(`build from ${compare} (${shape})`);
    if (config) targets.at(-1)!.governance!.push(`config BENCH_COMPARE_CONFIG='${JSON.stringify(config)}' merged over the benchmark's`);
    if (process.env.BENCH_COMPARE_NODE_FLAGS !== undefined) targets.at(-1)!.governance!.push(`node flags BENCH_COMPARE_NODE_FLAGS='${process.env.BENCH_COMPARE_NODE_FLAGS}' instead of BENCH_SVC_NODE_FLAGS`);
  }
  for (const t of targets) await smokeTest(t);
}

/**
 * The hardening issue's hostile burst, each gateway started afresh (idle, as after a deploy) so
 * neither the load before it nor the burst's leftovers colour the other figures; all at once,
 * since each process's memory is its own.
 */
async function burstOnFreshTargets(mockPort: number, logDir: string): Promise<NonNullable<RunData['burst']>> {
  log(`\n## Hostile burst on fresh gateways: ${burstBodies} × ${burstMb} MiB unauthenticated bodies, RSS ${burstSeconds} s later`);
  const dir = join(logDir, 'burst');
  mkdirSync(dir, { recursive: true });
  const fresh: Target[] = [];
  const out: NonNullable<RunData['burst']> = {};
  try {
    await startTargets(mockPort, dir, [], fresh);
    await Promise.all(fresh.filter((t) => t.pid).map(async (t) => void (out[t.name] = await hostileBurst(t, burstSeconds))));
  } finally {
    for (const t of fresh) await t.stop().catch(() => {});
  }
  for (const [name, b] of Object.entries(out)) log(`  ${name.padEnd(13)} idle=${b.beforeMb.toFixed(0)} peak=${b.peakMb.toFixed(0)} after=${b.afterMb.toFixed(0)} MiB statuses=${b.statuses.join(',')}`);
  return out;
}

/**
 * Bytes each gateway allocates and promotes per request at one connection, sampled by the probe
 * every process target was started with (alloc.ts): after the timed scenarios, so the sampling
 * profiler never slows a timed figure.
 */
async function allocationsOf(targets: Target[], mockPid: number): Promise<NonNullable<RunData['allocations']>> {
  const scenario = scenarios.find((s) => s.id === 'latency-1c')!;
  log(`\n## Allocations per request (${scenario.id}, ${allocSeconds} s each, V8's sampling heap profiler)`);
  const out: NonNullable<RunData['allocations']> = {};
  for (const t of targets.filter((x) => x.allocFile)) {
    await measure(scenario, t, 1, mockPid);
    const { allocated, promoted } = await sampleBoth(t, scenario, allocSeconds, mockPid);
    out[t.name] = { allocatedBytes: allocated.bytesPerRequest, promotedBytes: promoted.bytesPerRequest, scenario: scenario.id };
    log(`  ${t.name.padEnd(13)} allocated ${(allocated.bytesPerRequest / 1024).toFixed(1)} KB, promoted ${(promoted.bytesPerRequest / 1024).toFixed(2)} KB per request`);
  }
  return out;
}

/** The public board's sustained rate (sustain.ts) of every target, one after another. */
async function sustainedOf(targets: Target[]): Promise<NonNullable<RunData['sustained']>> {
  log('\n## Highest rate sustained with p99 under 1 s, 20 ms upstream (open loop)');
  const out: NonNullable<RunData['sustained']> = {};
  for (const t of targets) {
    const r = await sustainedRate(t, log);
    out[t.name] = { rate: r.rate, p99Ms: r.p99Ms };
  }
  return out;
}

/**
 * What each layer of svc adds to the allocation (layers.ts): the bare proxy's and the embedded
 * shape's figures just measured, and the partial layers between them, each a fresh process.
 */
async function layersOf(allocations: NonNullable<RunData['allocations']>, mockPort: number, mockPid: number, logDir: string): Promise<RunData['layers']> {
  const bare = allocations.bare;
  const full = allocations['svc-embedded'];
  if (!bare || !full) return undefined;
  log(`\n## Allocations by layer (svc embedded, ${layerScenario.id}, ${allocSeconds} s each)`);
  const partial = await partialLayers(mockPort, mockPid, join(logDir, 'layers'), 'embedded', allocSeconds);
  return {
    shape: 'embedded',
    scenario: layerScenario.id,
    rows: [{ name: 'bare proxy', ...bare }, ...partial, { name: fullLayerName, ...full }].map(({ name, allocatedBytes, promotedBytes }) => ({ name, allocatedBytes, promotedBytes })),
  };
}

async function main(): Promise<void> {
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const resultsDir = join(root, 'bench/results');
  const logDir = join(resultsDir, stamp);
  mkdirSync(logDir, { recursive: true });
  const skipped: string[] = [];
  const mock = await startMockProcess(logDir);
  const targets: Target[] = [];
  try {
    await startTargets(mock.port, logDir, skipped, targets);
    for (const t of targets) if (t.governance) log(`${t.name}: ${t.governance.join('; ')}`);
    const data: RunData = {
      date: started.toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memGiB: Math.round(totalmem() / 2 ** 30), node: process.version, os: `Linux ${release()}` },
      settings,
      targets: targets.map((t) => ({ name: t.name, ...(t.governance ? { governance: t.governance } : {}) })),
      skipped,
      results: {},
      peakRssMb: {},
      idleRssMb: {},
    };
    // Idle: started, provisioned and smoke-tested, then left alone, before any load.
    await sleep(idleSeconds * 1000);
    for (const t of targets) if (t.pid) data.idleRssMb![t.name] = rssMb(t.pid);
    data.bootRssMb = Object.fromEntries(targets.filter((t) => t.bootRssMb !== undefined).map((t) => [t.name, t.bootRssMb!]));
    for (const t of targets) if (t.noStream) skipped.push(`${t.name}, streamed scenarios: ${t.noStream}`);
    for (const s of chosenScenarios) {
      log(`\n## ${s.title}`);
      const runners = targets.filter((t) => !(s.stream && t.noStream));
      for (const t of runners) await measure(s, t, settings.warmupSeconds, mock.child.pid);
      const byTarget: Partial<Record<TargetName, Figures[]>> = (data.results[s.id] = {});
      for (let rep = 1; rep <= settings.reps; rep++) {
        for (const t of runners) {
          const f = await measure(s, t, settings.seconds, mock.child.pid);
          (byTarget[t.name] ??= []).push(f);
          const shown = Object.entries(f).map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(3)}`).join(' ');
          log(`  rep ${rep} ${t.name.padEnd(13)} ${shown}`);
        }
      }
    }
    for (const t of targets) if (t.pid) data.peakRssMb[t.name] = peakRssMb(t.pid);
    if (allocSeconds > 0) data.allocations = await allocationsOf(targets, mock.child.pid);
    if (allocSeconds > 0 && process.env.BENCH_LAYERS !== '0') data.layers = await layersOf(data.allocations!, mock.port, mock.child.pid!, logDir);
    if (process.env.BENCH_SUSTAIN !== '0') data.sustained = await sustainedOf(targets);
    if (burstSeconds > 0) data.burst = await burstOnFreshTargets(mock.port, logDir);
    const { text, checks } = markdown(data);
    writeFileSync(join(resultsDir, `${stamp}.md`), text);
    writeFileSync(join(resultsDir, `${stamp}.json`), JSON.stringify({ ...data, checks }, null, 2));
    log(`\n${text}`);
    log(`Written: bench/results/${stamp}.md and .json (logs in bench/results/${stamp}/)`);
  } finally {
    for (const t of targets.reverse()) await t.stop().catch((err: unknown) => log(`! stopping ${t.name}: ${(err as Error).message}`));
    await mock.child.stop();
  }
}

if (process.argv.includes('--profile')) await import('./profile.js');
else if (process.argv.includes('--allocations')) await import('./allocations.js');
else if (process.argv.includes('--layers')) {
  await layersAlone().catch((err: unknown) => {
    process.stderr.write(`bench layers: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
else if (process.argv.includes('--modules')) await import('./modules.js');
else if (process.argv.includes('--survival')) await import('./survival.js');
else {
  main().catch((err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
