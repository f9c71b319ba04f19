import { Pool } from 'undici';
import { quantile } from './stats.js';
import { requestBody, sustainUpstreamId } from './scenarios.js';
import type { Target } from './targets.js';

/**
 * The public board's second figure (PERF-NOTES.md): the highest request rate a gateway sustains
 * with p99 under 1 s against a 20 ms upstream. Open loop: requests are sent on a fixed schedule
 * whatever the answers do (a closed loop would slow down with the gateway and hide its queue),
 * over up to `maxConnections` keep-alive connections; a request that finds every connection busy
 * waits in the client's queue, and that wait counts in its time. A rate passes when p99 < 1 s,
 * at most 0.1 % fail and at least 95 % of what was sent was answered within the step. The search
 * doubles the rate from `startRate` until a step fails, then halves the gap three times.
 */
const stepSeconds = Number(process.env.BENCH_SUSTAIN_SECONDS || 3);
const startRate = Number(process.env.BENCH_SUSTAIN_START || 500);
const maxRate = Number(process.env.BENCH_SUSTAIN_MAX || 32_000);
const maxConnections = 1024;

/** One step of the search: `rate` requests per second for `stepSeconds`. */
export interface SustainStep {
  rate: number;
  p99Ms: number;
  answered: number;
  sent: number;
  failed: number;
  pass: boolean;
}

export interface SustainResult {
  /** The highest rate that passed (0 when none did). */
  rate: number;
  /** Its p99, ms. */
  p99Ms: number;
  steps: SustainStep[];
}

async function step(target: Target, rate: number): Promise<SustainStep> {
  const pool = new Pool(target.url, { connections: maxConnections, pipelining: 1 });
  const body = requestBody(target.model(sustainUpstreamId), false);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}`, ...target.headers };
  const times: number[] = [];
  let sent = 0;
  let failed = 0;
  const pending = new Set<Promise<void>>();
  const one = (): void => {
    const t0 = performance.now();
    const p = pool
      .request({ path: '/v1/chat/completions', method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode === 200) times.push(performance.now() - t0);
        else failed++;
      })
      .catch(() => void failed++)
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  const started = performance.now();
  const until = started + stepSeconds * 1000;
  await new Promise<void>((done) => {
    const tick = (): void => {
      const now = performance.now();
      const due = Math.floor(((Math.min(now, until) - started) / 1000) * rate);
      while (sent < due) {
        sent++;
        one();
      }
      if (now >= until) return done();
      setTimeout(tick, 1);
    };
    tick();
  });
  // Answered within the step's window plus one second: a gateway that queues more than that fails.
  const answeredInTime = await Promise.race([Promise.all(pending).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
  const answered = times.length;
  await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, 10_000))]);
  await pool.destroy();
  const p99Ms = quantile(Float64Array.from(times), 0.99);
  const pass = answeredInTime && p99Ms < 1000 && failed <= sent * 0.001 && answered >= sent * 0.95;
  return { rate, p99Ms, answered, sent, failed, pass };
}

/** Searches the highest passing rate for one target; `log` gets one line per step. */
export async function sustainedRate(target: Target, log: (line: string) => void): Promise<SustainResult> {
  const steps: SustainStep[] = [];
  const run = async (rate: number): Promise<SustainStep> => {
    const s = await step(target, Math.round(rate));
    steps.push(s);
    log(`  ${target.name.padEnd(13)} ${String(s.rate).padStart(6)} req/s → p99 ${s.p99Ms.toFixed(1)} ms, ${s.answered}/${s.sent} answered, ${s.failed} failed: ${s.pass ? 'pass' : 'FAIL'}`);
    await new Promise((r) => setTimeout(r, 500));
    return s;
  };
  let good: SustainStep | undefined;
  let bad: SustainStep | undefined;
  for (let rate = startRate; rate <= maxRate; rate *= 2) {
    const s = await run(rate);
    if (!s.pass) {
      bad = s;
      break;
    }
    good = s;
  }
  if (bad) {
    let lo = good?.rate ?? 0;
    let hi = bad.rate;
    for (let i = 0; i < 3 && hi - lo > 50; i++) {
      const s = await run((lo + hi) / 2);
      if (s.pass) {
        lo = s.rate;
        good = s;
      } else hi = s.rate;
    }
  }
  return { rate: good?.rate ?? 0, p99Ms: good?.p99Ms ?? NaN, steps };
}
