import autocannon from 'autocannon';
import { Pool } from 'undici';

/**
 * The load generators. Whole replies: autocannon (closed loop, keep-alive, `connections`
 * requests in flight), with each response's own time kept (autocannon's histogram rounds to whole
 * milliseconds, too coarse for a 0.1 ms overhead). Streams: a small undici client that times the
 * first body byte and the end of each stream, and counts the reads a stream arrived in.
 */

export interface LoadOptions {
  /** Origin of the target. */
  url: string;
  apiKey: string;
  /** The JSON request body, serialized once. */
  body: string;
  /** When set, called for each request's body as it is sent (whole replies only). */
  bodyOf?: () => string;
  /** Extra request headers (Portkey's routing headers). */
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

/** One whole-reply load run. */
export interface LoadResult {
  /** Completed 2xx responses. */
  ok: number;
  /** Transport errors, timeouts and non-2xx answers. */
  failed: number;
  seconds: number;
  /** Response times of the 2xx responses, ms. */
  latencies: Float64Array;
}

const headers = (apiKey: string, extra?: Record<string, string>): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...extra });

/** Runs autocannon against POST /v1/chat/completions for `seconds`. */
export function loadWhole(o: LoadOptions): Promise<LoadResult> {
  let latencies = new Float64Array(65_536);
  let n = 0;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const bodyOf = o.bodyOf;
    const requests = bodyOf ? [{ setupRequest: (r: Record<string, unknown>) => ({ ...r, body: bodyOf() }) }] : undefined;
    const tracker = autocannon(
      { url: `${o.url}/v1/chat/completions`, method: 'POST', headers: headers(o.apiKey, o.headers), body: o.body, requests, connections: o.connections, duration: o.seconds, pipelining: 1, timeout: 10 },
      (err, result) => {
        if (err) return reject(err);
        resolve({ ok: n, failed: result.errors + result.timeouts + result.non2xx, seconds: (performance.now() - started) / 1000, latencies: latencies.subarray(0, n) });
      },
    );
    tracker.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status < 200 || status >= 300) return;
      if (n === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[n++] = ms;
    });
  });
}

/** One streaming load run. */
export interface StreamResult {
  ok: number;
  failed: number;
  seconds: number;
  /** Per stream: time to the first body byte, ms. */
  ttfb: number[];
  /** Per stream: time to the end of the body, ms. */
  end: number[];
  /** Per stream: how many reads the body arrived in (≈ the chunk count when nothing buffers). */
  reads: number[];
  /** Streams whose body lacked the usage chunk or `data: [DONE]`. */
  incomplete: number;
}

/** Streams POST /v1/chat/completions (stream: true) on `connections` loops for `seconds`. */
export async function loadStreams(o: LoadOptions): Promise<StreamResult> {
  const pool = new Pool(o.url, { connections: o.connections, pipelining: 1 });
  const r: StreamResult = { ok: 0, failed: 0, seconds: 0, ttfb: [], end: [], reads: [], incomplete: 0 };
  const started = performance.now();
  const until = started + o.seconds * 1000;
  const one = async (): Promise<void> => {
    const t0 = performance.now();
    const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: headers(o.apiKey, o.headers), body: o.body });
    if (res.statusCode !== 200) {
      await res.body.dump();
      r.failed++;
      return;
    }
    let first = 0;
    let reads = 0;
    let sawUsage = false;
    let tail = '';
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (reads++ === 0) first = performance.now();
      const text = chunk.toString('latin1');
      sawUsage ||= text.includes('"usage"');
      tail = (tail + text).slice(-64);
    }
    const end = performance.now();
    if (!sawUsage || !tail.includes('data: [DONE]')) r.incomplete++;
    r.ok++;
    r.ttfb.push(first - t0);
    r.end.push(end - t0);
    r.reads.push(reads);
  };
  const loop = async (): Promise<void> => {
    while (performance.now() < until) await one().catch(() => void r.failed++);
  };
  await Promise.all(Array.from({ length: o.connections }, loop));
  r.seconds = (performance.now() - started) / 1000;
  await pool.close();
  return r;
}
