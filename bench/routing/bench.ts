/**
 * `npm run bench:routing`: the route classifier's costs, measured (never asserted in tests).
 * Load time, RSS the classifier adds, decision latency (cold: encoded in the worker; warm: from the
 * result cache), the main thread's event-loop delay while a batch is classified (inference must be
 * off the loop), and a CPU profile of the scoring path with its top frames.
 */
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createClassifier } from '../../plugins/routing/classifier/index.js';
import { defaultModelDir, SentenceEncoder } from '../../plugins/routing/classifier/encoder.js';
import { RouteScorer } from '../../plugins/routing/classifier/scoring.js';
import { summarize, type CpuProfile } from '../cpuprofile.js';
import { quantile } from '../stats.js';
import { loadPrompts, loadRoutes } from './dataset.js';

const routes = loadRoutes();
const texts = loadPrompts(routes).map((p) => p.text);
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (x: number): string => `${x.toFixed(2)} ms`;
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 300));

async function loopDelayDuring(work: () => Promise<unknown>): Promise<{ p99: number; max: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  await work();
  h.disable();
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
}

global.gc?.();
await settle();
const rssBefore = process.memoryUsage().rss;
const idle = await loopDelayDuring(() => new Promise((r) => setTimeout(r, 1000)));

const started = performance.now();
const cold = createClassifier({ resultCacheSize: 0, promptCacheSize: 0 });
await cold.ready();
const loadWall = performance.now() - started;
if (cold.state !== 'ready') throw new Error('the classifier did not load');
await cold.classify('warm up the route vectors', routes);
const rssReady = process.memoryUsage().rss;

const coldMs: number[] = [];
for (const text of texts) {
  const t = performance.now();
  await cold.classify(text, routes);
  coldMs.push(performance.now() - t);
}
// Four requests in flight at a time, as under load: the loop's delay is what other requests would feel.
const busy = await loopDelayDuring(async () => {
  for (let i = 0; i < texts.length; i += 4) await Promise.all(texts.slice(i, i + 4).map((t) => cold.classify(`${t} (again)`, routes)));
});
const rssAfter = process.memoryUsage().rss;
await cold.close();

const warm = createClassifier({});
await warm.ready();
for (const text of texts) await warm.classify(text, routes);
const warmMs: number[] = [];
for (const text of texts) {
  const t = performance.now();
  await warm.classify(text, routes);
  warmMs.push(performance.now() - t);
}
await warm.close();

console.log('# Route classifier benchmark\n');
console.log(`| figure | value | goal |\n|---|---|---|`);
console.log(`| load (create → ready, incl. worker start and a warm-up) | ${ms(loadWall)} | ≤ 1 s |`);
console.log(`| RSS added when ready / after ${2 * texts.length} classifications | ${mb(rssReady - rssBefore)} / ${mb(rssAfter - rssBefore)} | ≤ 80 MB |`);
console.log(`| decision, encoded in the worker (${texts.length} prompts) p50 / p99 | ${ms(quantile(coldMs, 0.5))} / ${ms(quantile(coldMs, 0.99))} | p99 ≤ 2 ms |`);
console.log(`| decision, result cache hit p50 / p99 | ${ms(quantile(warmMs, 0.5))} / ${ms(quantile(warmMs, 0.99))} | |`);
console.log(`| main-thread event-loop delay idle p99 / max | ${ms(idle.p99)} / ${ms(idle.max)} | |`);
console.log(`| main-thread event-loop delay while classifying p99 / max | ${ms(busy.p99)} / ${ms(busy.max)} | ≈ idle |`);

// The profile runs the scoring path on this thread (a worker's profile is not reachable from here), after the figures above.
const scorer = new RouteScorer(await SentenceEncoder.load(defaultModelDir()), 0);
await scorer.score('warm up', routes);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
await session.post('Profiler.start');
for (const text of texts) await scorer.score(text, routes);
const { profile } = await session.post('Profiler.stop');
session.disconnect();
const summary = summarize(profile as unknown as CpuProfile, 12);
console.log(`\n## CPU profile of scoring ${texts.length} prompts: top self time\n\n| % | function | where |\n|---:|---|---|`);
for (const row of summary.self) console.log(`| ${row.pct.toFixed(1)} | \`${row.name}\` | ${row.where} |`);
console.log(`\n(${process.arch}, Node ${process.version}, load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')})`);
