import { readEld } from './eld.js';
import { loadStreams, loadWhole } from './load.js';
import { cpuMicros, sampleRss } from './proc.js';
import { quantile } from './stats.js';
import type { Target } from './targets.js';

/** One load shape, run against every target in turn. */
export interface Scenario {
  id: 'latency-1c' | 'stream-1c' | 'auto-1c' | 'auto-fresh-1c' | 'delay-16c' | 'saturation-64c' | 'stream-16c';
  title: string;
  /** The mock's model id that sets the reply's shape (see mock-upstream.ts). */
  upstreamId: string;
  connections: number;
  stream: boolean;
  /** svc targets with routes send model `auto`; the others send the plain model (the floor to compare with). */
  auto?: boolean;
  /** Every request asks something new (`freshPrompt`), so no cache of the classifier's answers or embeddings helps. */
  fresh?: boolean;
}

/** Content chunks of the streaming scenario's reply. */
export const streamChunks = 20;

export const scenarios: Scenario[] = [
  { id: 'latency-1c', title: '1 connection, no upstream delay', upstreamId: 'bench-d0', connections: 1, stream: false },
  { id: 'auto-1c', title: '1 connection, model `auto` in svc (routes + classifier), no upstream delay', upstreamId: 'bench-d0', connections: 1, stream: false, auto: true },
  { id: 'auto-fresh-1c', title: '1 connection, model `auto` in svc, a new prompt every request (the classifier runs each time)', upstreamId: 'bench-d0', connections: 1, stream: false, auto: true, fresh: true },
  { id: 'delay-16c', title: '16 connections, 50 ms upstream delay', upstreamId: 'bench-d50', connections: 16, stream: false },
  { id: 'saturation-64c', title: '64 connections, no upstream delay (saturation)', upstreamId: 'bench-d0', connections: 64, stream: false },
  { id: 'stream-16c', title: `streaming, 16 connections, ${streamChunks} chunks 5 ms apart + usage chunk`, upstreamId: `bench-d0-c${streamChunks}-g5`, connections: 16, stream: true },
  { id: 'stream-1c', title: `streaming, 1 connection, ${streamChunks} chunks 5 ms apart + usage chunk`, upstreamId: `bench-d0-c${streamChunks}-g5`, connections: 1, stream: true },
];

/** The mock model every route of the `auto` scenario (and the workspace default) sends to. */
export const autoUpstreamId = 'bench-d0';

/** The upstream of the sustained-rate search (sustain.ts): 20 ms, as on the public board. */
export const sustainUpstreamId = 'bench-d20';

/** Every upstream model id the scenarios use (svc gets one model per id). */
export const upstreamIds = [...new Set([...scenarios.map((s) => s.upstreamId), sustainUpstreamId])];

const asks = ['Write a SQL query that lists', 'Summarize in two sentences', 'Translate into German', 'Explain to a new colleague', 'Fix the bug in this function that returns', 'Draft a short email about'];
const topics = ['the orders placed by each customer last month', 'why the nightly build failed', 'our refund policy for damaged goods', 'the difference between a mutex and a semaphore', 'the quarterly sales figures per region', 'the trip to the Lisbon office'];

/** Prompts made so far in this run: warm-ups and repetitions never repeat one (it would be a cache hit). */
let freshCount = 0;

/** The `i`-th of an endless run of different user prompts (for `auto-fresh-1c`). */
export function freshPrompt(i: number): string {
  return `${asks[i % asks.length]} ${topics[Math.floor(i / asks.length) % topics.length]} (case ${i}).`;
}

/** A typical small request: a system and a user message, a token limit. */
export function requestBody(model: string, stream: boolean, prompt = 'Say hello and ask how I am doing today.'): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a terse assistant. Answer in one short sentence.' },
      { role: 'user', content: prompt },
    ],
    max_tokens: 100,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/** The figures of one measurement (one target, one repetition), by name. */
export type Figures = Record<string, number>;

/** Figures every scenario reports, with their unit (for the report). */
export const units: Record<string, string> = {
  rps: 'req/s',
  p50_ms: 'ms',
  p99_ms: 'ms',
  cpu_us_per_req: 'µs',
  upstream_cpu_us_per_req: 'µs',
  rss_mb: 'MiB',
  eld_p99_ms: 'ms',
  eld_max_ms: 'ms',
  failed: '',
  ttfb_p50_ms: 'ms',
  ttfb_p99_ms: 'ms',
  end_p50_ms: 'ms',
  end_p99_ms: 'ms',
  reads_p50: 'reads',
  incomplete: '',
};

/**
 * Runs one scenario against one target for `seconds` and returns its figures; CPU time is the
 * gateway process's (and the mock's, as `upstream_cpu_us_per_req`) over the run, per completed request.
 */
export async function measure(scenario: Scenario, target: Target, seconds: number, mockPid: number): Promise<Figures> {
  const model = scenario.auto && target.auto ? 'auto' : target.model(scenario.upstreamId);
  const body = requestBody(model, scenario.stream);
  const bodyOf = scenario.fresh ? () => requestBody(model, scenario.stream, freshPrompt(freshCount++)) : undefined;
  const opts = { url: target.url, apiKey: target.apiKey, headers: target.headers, body, bodyOf, connections: scenario.connections, seconds };
  // Resets the gateway's event-loop histogram, so what is read afterwards is this measurement's.
  if (target.pid && target.eldFile) await readEld(target.pid, target.eldFile);
  const gateway = target.pid;
  const stopRss = gateway ? sampleRss(gateway) : () => 0;
  const cpu0 = gateway ? cpuMicros(gateway) : 0;
  const mock0 = cpuMicros(mockPid);
  const f: Figures = {};
  let ok: number;
  if (scenario.stream) {
    const r = await loadStreams(opts);
    ok = r.ok;
    Object.assign(f, {
      rps: r.ok / r.seconds,
      ttfb_p50_ms: quantile(r.ttfb, 0.5),
      ttfb_p99_ms: quantile(r.ttfb, 0.99),
      end_p50_ms: quantile(r.end, 0.5),
      end_p99_ms: quantile(r.end, 0.99),
      reads_p50: quantile(r.reads, 0.5),
      failed: r.failed,
      incomplete: r.incomplete,
    });
  } else {
    const r = await loadWhole(opts);
    ok = r.ok;
    Object.assign(f, { rps: r.ok / r.seconds, p50_ms: quantile(r.latencies, 0.5), p99_ms: quantile(r.latencies, 0.99), failed: r.failed });
  }
  f.requests = ok;
  if (gateway) {
    f.cpu_us_per_req = ok ? (cpuMicros(gateway) - cpu0) / ok : NaN;
    f.rss_mb = stopRss();
    const eld = target.eldFile ? await readEld(gateway, target.eldFile) : undefined;
    if (eld) Object.assign(f, { eld_p99_ms: eld.p99, eld_max_ms: eld.max });
  }
  f.upstream_cpu_us_per_req = ok ? (cpuMicros(mockPid) - mock0) / ok : NaN;
  return f;
}
