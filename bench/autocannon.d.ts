/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    pipelining?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    /** Requests sent in turn on each connection; `setupRequest` may change each one before it is sent. */
    requests?: Array<{ setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }>;
  }

  interface Result {
    totalCompletedRequests: number;
    /** `total`: responses received (any status). */
    requests: { total: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    /** Seconds. */
    duration: number;
  }

  /** Emits `response` (client, statusCode, resBytes, responseTimeMs) for every response. */
  type Tracker = EventEmitter & { stop(): void };

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Tracker;
  export default autocannon;
}
