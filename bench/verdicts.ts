import { cell, minus, num, over, paired, runs, type RunData } from './data.js';
import { streamChunks } from './scenarios.js';
import { spread, type Spread } from './stats.js';
import type { TargetName } from './targets.js';
import { burstBodies, burstMb } from './burst.js';

/** One svc shape against one target. `pass` is null where the issue sets no limit for that shape. */
export interface Verdict {
  value: number;
  shown: string;
  pass: boolean | null;
}

/** One of the performance issues' targets, judged for each svc shape that ran. */
export interface TargetCheck {
  id: string;
  what: string;
  limit: string;
  by: Partial<Record<TargetName, Verdict>>;
}

/** Per repetition: what svc adds over direct, as a multiple of what the bare proxy adds. */
function addedRatio(d: RunData, scenario: string, svc: TargetName, figure: string): Spread {
  const s = runs(d, scenario, svc, figure);
  const b = runs(d, scenario, 'bare', figure);
  const x = runs(d, scenario, 'direct', figure);
  return spread(s.map((v, i) => (v - x[i]!) / (b[i]! - x[i]!)));
}

const verdict = (s: Spread, ok: ((v: number) => boolean) | null, shown: string): Verdict => ({
  value: s.median,
  shown,
  pass: ok === null || !Number.isFinite(s.median) ? null : ok(s.median),
});

function judge(d: RunData, svc: TargetName): Record<string, Verdict | undefined> {
  const ran = (scenario: string, t: TargetName): boolean => (d.results[scenario]?.[t]?.length ?? 0) > 0;
  // Every check compares with the bare proxy, and most with direct too: both must have run.
  const has = (scenario: string): boolean => ran(scenario, svc) && ran(scenario, 'bare') && (scenario === 'saturation-64c' || ran(scenario, 'direct'));
  const out: Record<string, Verdict | undefined> = {};
  const embedded = svc === 'svc-embedded' || (svc === 'svc-compare' && process.env.BENCH_COMPARE_SHAPE !== 'scale-out');
  if (has('saturation-64c')) {
    const cpu = paired(d, 'saturation-64c', svc, 'bare', 'cpu_us_per_req', over);
    const limit = embedded ? 2 : 2.5;
    out.cpu = verdict(cpu, (v) => v <= limit, `${cell(cpu, '×')}; ${num(spread(runs(d, 'saturation-64c', svc, 'cpu_us_per_req')).median)} µs vs ${num(spread(runs(d, 'saturation-64c', 'bare', 'cpu_us_per_req')).median)} µs`);
    const rps = paired(d, 'saturation-64c', svc, 'bare', 'rps', over);
    out.throughput = verdict(rps, (v) => v >= 0.65, `${cell(spread(rps.runs.map((v) => v * 100)), ' %')}; ${num(spread(runs(d, 'saturation-64c', svc, 'rps')).median)} vs ${num(spread(runs(d, 'saturation-64c', 'bare', 'rps')).median)} req/s`);
  }
  if (has('latency-1c')) {
    const r = addedRatio(d, 'latency-1c', svc, 'p50_ms');
    const added = (t: TargetName) => num(paired(d, 'latency-1c', t, 'direct', 'p50_ms', minus).median);
    out.p50 = verdict(r, (v) => v <= 1.5, `${cell(r, '×')}; +${added(svc)} ms vs bare +${added('bare')} ms`);
  }
  if (has('latency-1c')) {
    const overBare = paired(d, 'latency-1c', svc, 'bare', 'p99_ms', minus);
    const limit = embedded ? 1 : 2;
    out.p99one = verdict(overBare, (v) => v <= limit, `${cell(overBare, ' ms')}; p99 ${num(spread(runs(d, 'latency-1c', svc, 'p99_ms')).median)} vs bare ${num(spread(runs(d, 'latency-1c', 'bare', 'p99_ms')).median)} ms`);
    const added = (t: TargetName) => paired(d, 'latency-1c', t, 'direct', 'p99_ms', minus);
    out.board = verdict(added(svc), null, `+${cell(added(svc), ' ms')} (bare +${num(added('bare').median)} ms)`);
  }
  const sustained = d.sustained?.[svc];
  if (sustained) out.sustained = verdict(spread([sustained.rate]), null, `${num(sustained.rate)} req/s (p99 ${num(sustained.p99Ms)} ms); bare ${num(d.sustained?.bare?.rate ?? NaN)}, direct ${num(d.sustained?.direct?.rate ?? NaN)}`);
  const alloc = d.allocations?.[svc];
  if (alloc) {
    const bare = d.allocations?.bare;
    out.allocated = verdict(spread([alloc.allocatedBytes / 1024]), (v) => v <= 25, `${num(alloc.allocatedBytes / 1024)} KB (bare ${num((bare?.allocatedBytes ?? NaN) / 1024)} KB)`);
    out.promoted = verdict(spread([alloc.promotedBytes / 1024]), (v) => v <= 1, `${num(alloc.promotedBytes / 1024)} KB (bare ${num((bare?.promotedBytes ?? NaN) / 1024)} KB)`);
  }
  if (has('delay-16c')) {
    const p99 = paired(d, 'delay-16c', svc, 'direct', 'p99_ms', minus);
    out.p99 = verdict(p99, (v) => v <= 2, `${cell(p99, ' ms')}`);
  }
  if (has('stream-16c')) {
    const r = addedRatio(d, 'stream-16c', svc, 'ttfb_p50_ms');
    const added = (t: TargetName) => num(paired(d, 'stream-16c', t, 'direct', 'ttfb_p50_ms', minus).median);
    out.ttfb = verdict(r, (v) => v <= 1.5, `${cell(r, '×')}; +${added(svc)} ms vs bare +${added('bare')} ms`);
    const reads = spread(runs(d, 'stream-16c', svc, 'reads_p50'));
    out.chunks = verdict(reads, (v) => v >= streamChunks * 0.8, `${cell(reads)} reads per stream of ${streamChunks} chunks`);
    const end = paired(d, 'stream-16c', svc, 'direct', 'end_p50_ms', minus);
    out.end = verdict(end, null, `${cell(end, ' ms')}`);
  }
  const rss = d.peakRssMb[svc];
  const bareRss = d.peakRssMb.bare;
  if (rss !== undefined && bareRss !== undefined) out.rss = verdict(spread([rss / bareRss]), (v) => v <= 1.3, `${num(rss / bareRss)}×; ${num(rss)} vs ${num(bareRss)} MiB`);
  const boot = d.bootRssMb?.[svc];
  if (boot !== undefined) out.boot = verdict(spread([boot]), (v) => v <= 110, `${num(boot)} MiB`);
  const idle = d.idleRssMb?.[svc];
  if (idle !== undefined) out.idle = verdict(spread([idle]), (v) => v <= 140, `${num(idle)} MiB`);
  const b = d.burst?.[svc];
  if (b) {
    const r = b.afterMb / b.beforeMb;
    out.burst = verdict(spread([r]), (v) => v <= 1.5, `${num(r)}×; ${num(b.afterMb)} MiB ${b.seconds} s after (peak ${num(b.peakMb)}) vs idle ${num(b.beforeMb)} MiB`);
  }
  const failed = Object.values(d.results).flatMap((r) => r[svc] ?? []).reduce((n, f) => n + (f.failed ?? 0) + (f.incomplete ?? 0), 0);
  out.failed = verdict(spread([failed]), (v) => v === 0, `${failed}`);
  return out;
}

const rows: Array<{ id: string; what: string; limit: string }> = [
  { id: 'p99one', what: 'p99, 1 connection, over the bare proxy (svc − bare, issue 29)', limit: '≤ 1 ms embedded, ≤ 2 ms scale-out' },
  { id: 'board', what: 'Public board: added p99 at 1 connection (svc − direct)', limit: 'reported' },
  { id: 'sustained', what: 'Public board: highest rate with p99 < 1 s, 20 ms upstream', limit: 'reported' },
  { id: 'cpu', what: 'CPU per request, 64 connections (svc ÷ bare, issue 29)', limit: '≤ 2× embedded, ≤ 2.5× scale-out' },
  { id: 'rss', what: 'Peak RSS under load (VmHWM, svc ÷ bare, issue 29)', limit: '≤ 1.3×' },
  { id: 'boot', what: 'Idle RSS without routes (started, nothing provisioned, issue 29)', limit: '≤ 110 MB' },
  { id: 'idle', what: 'Idle RSS with routes and the classifier (provisioned, smoke-tested, issue 29)', limit: '≤ 140 MB' },
  { id: 'allocated', what: 'Allocated per request, 1 connection (issue 29)', limit: '≤ 25 KB' },
  { id: 'promoted', what: 'Promoted per request, 1 connection (issue 29)', limit: '≤ 1 KB' },
  { id: 'throughput', what: 'Saturation throughput, 64 connections (svc ÷ bare, issue 6)', limit: '≥ 65 %' },
  { id: 'p50', what: 'Added p50, 1 connection (svc added ÷ bare added, issue 6)', limit: '≤ 1.5×' },
  { id: 'p99', what: 'p99, 16 connections, 50 ms upstream (svc − direct, issue 6)', limit: '≤ 2 ms' },
  { id: 'ttfb', what: 'Streaming: added time to first byte (svc added ÷ bare added, issue 6)', limit: '≤ 1.5×' },
  { id: 'chunks', what: 'Streaming: chunks forwarded as they arrive (reads per stream, p50)', limit: `≥ ${streamChunks * 0.8} of ${streamChunks}` },
  { id: 'end', what: 'Streaming: added time to end of stream (svc − direct, p50)', limit: 'reported' },
  { id: 'burst', what: `RSS 30 s after ${burstBodies} × ${burstMb} MiB unauthenticated bodies ÷ idle RSS (issue 16)`, limit: '≤ 1.5×' },
  { id: 'failed', what: 'Failed or incomplete requests (all scenarios)', limit: '0' },
];

/** Judges every svc shape that ran against issue #6's targets. */
export function evaluateTargets(d: RunData): TargetCheck[] {
  const svcs = d.targets.map((t) => t.name).filter((n) => n.startsWith('svc-'));
  const judged = Object.fromEntries(svcs.map((s) => [s, judge(d, s)]));
  return rows.map((r) => ({ ...r, by: Object.fromEntries(svcs.filter((s) => judged[s]![r.id]).map((s) => [s, judged[s]![r.id]!])) }));
}
