/**
 * `npm run bench:routing`: the route classifier's costs, measured (never asserted in tests).
 * Load time, decision latency on every prompt of the development set (no cache: there is none),
 * the RSS and heap the classifier adds when loaded and after 10,000 distinct prompts (it must stay
 * flat), the event loop's delay while deciding, and a CPU profile of a decision's top frames.
 *
 * Memory is measured as the service holds it: under the service's node flags (node-flags.ts, which
 * the npm script passes), and with the young generation counted apart. Its pages are the scratch
 * space of whatever the process does: V8 commits them as allocation reaches them (up to 64 MB with
 * 32 MB semi-spaces) whether the garbage is a request's or a decision's, so in a standalone run
 * they first appear to be the classifier's, while in the service request traffic has already
 * committed them. What the classifier adds is the RSS outside them.
 */
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createStudentClassifier } from '../../plugins/routing/classifier/index.js';
import { summarize, type CpuProfile } from '../cpuprofile.js';
import { quantile } from '../stats.js';
import { loadSets } from './dataset.js';
import { applyRuntimeFlags, missingNodeFlags } from '../../kernel/lifecycle/node-flags.js';

const sets = loadSets();
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number): string => `${x.toFixed(3)} ms`;
const settle = async (): Promise<void> => {
  global.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  global.gc?.();
};
/** The young generation's committed pages (new space and its large objects). */
const young = (): number => getHeapSpaceStatistics().filter((s) => s.space_name.startsWith('new_')).reduce((sum, s) => sum + s.physical_space_size, 0);
const memory = (): { rss: number; outside: number; young: number; heap: number } => {
  const m = process.memoryUsage();
  const y = young();
  return { rss: m.rss, outside: m.rss - y, young: y, heap: m.heapUsed + m.arrayBuffers };
};
const added = (m: ReturnType<typeof memory>, from: ReturnType<typeof memory>): string =>
  `+${mb(m.outside - from.outside)} RSS outside the young generation / +${mb(m.heap - from.heap)} heap (young generation ${mb(m.young)}, RSS +${mb(m.rss - from.rss)})`;
const missing = missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
if (missing.length > 0) console.warn(`(not under the service's node flags: ${missing.join(' ')} missing; memory figures will differ from the service's)`);
// The V8 flags the service sets once it listens (node-flags.ts), so decisions run as they do there.
const runtimeFlags = applyRuntimeFlags();

await settle();
const before = memory();
const started = performance.now();
const classifier = createStudentClassifier();
await classifier.ready();
const loadMs = performance.now() - started;
if (classifier.state !== 'ready') throw new Error(`the classifier did not load: ${classifier.failure}`);
for (const set of sets) classifier.classifySync('warm up the route vectors', set.routes);
await settle();
const loaded = memory();

const latencies: number[] = [];
for (let round = 0; round < 3; round++) {
  for (const set of sets) {
    for (const p of set.prompts) {
      const t = performance.now();
      classifier.classifySync(p.text, set.routes);
      latencies.push(performance.now() - t);
    }
  }
}
// Long prompts: the classifier reads a capped prefix, so a 100 kB prompt costs what 2,000 characters cost.
const long = sets[0]!.prompts.map((p) => p.text).join(' ').repeat(20).slice(0, 100_000);
const longMs: number[] = [];
for (let i = 0; i < 200; i++) {
  const t = performance.now();
  classifier.classifySync(`${i} ${long}`, sets[0]!.routes);
  longMs.push(performance.now() - t);
}

// 10,000 distinct prompts (fragments of the set recombined with a counter), with the loop watched.
const fragments = sets.flatMap((s) => s.prompts.map((p) => p.text));
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const checkpoints: string[] = [];
for (let i = 1; i <= 10_000; i++) {
  const text = `${fragments[i % fragments.length]} ${fragments[(i * 7) % fragments.length]} #${i}`;
  classifier.classifySync(text, sets[i % sets.length]!.routes);
  if (i % 2500 === 0) {
    await settle();
    const m = memory();
    checkpoints.push(`${i}: ${added(m, before)}`);
  }
  // One decision per turn of the loop, as requests come: the delay is what one decision costs the loop.
  await new Promise((r) => setImmediate(r));
}
delay.disable();

console.log('# Route classifier benchmark (built-in student table, on the calling thread)\n');
console.log('| figure | value | goal |\n|---|---|---|');
console.log(`| load (create → ready) | ${ms(loadMs)} | |`);
console.log(`| decision p50 / p99 / max (${latencies.length} decisions, ${sets.length} route sets) | ${ms(quantile(latencies, 0.5))} / ${ms(quantile(latencies, 0.99))} / ${ms(Math.max(...latencies))} | ≤ 0.5 / ≤ 2 ms |`);
console.log(`| decision on a 100,000-character prompt p50 / p99 (reads the first 2,000) | ${ms(quantile(longMs, 0.5))} / ${ms(quantile(longMs, 0.99))} | |`);
console.log(`| memory added when loaded (heap = used heap + array buffers) | ${added(loaded, before)} | ≤ 30 MB |`);
console.log(`| after N distinct prompts | ${checkpoints.join('; ')} | flat |`);
console.log(`| event-loop delay while deciding 10,000 prompts p99 / max | ${ms(delay.percentile(99) / 1e6)} / ${ms(delay.max / 1e6)} | |`);

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
for (let round = 0; round < 5; round++) for (const set of sets) for (const p of set.prompts) classifier.classifySync(p.text, set.routes);
const { profile } = await session.post('Profiler.stop');
session.disconnect();
const summary = summarize(profile as unknown as CpuProfile, 10);
console.log(`\n## CPU profile of deciding every prompt five times: top self time\n\n| % | function | where |\n|---:|---|---|`);
for (const row of summary.self) console.log(`| ${row.pct.toFixed(1)} | \`${row.name}\` | ${row.where} |`);
console.log(`\n(${process.arch}, Node ${process.version} ${[...process.execArgv, ...runtimeFlags].join(' ')}, load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')})`);
