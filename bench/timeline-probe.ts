import dc from 'node:diagnostics_channel';
import { openSync, readSync, writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { isMainThread, Worker } from 'node:worker_threads';
import { codes } from './timeline.js';

/**
 * A request timeline of any Node HTTP gateway, preloaded with `--import`: the moments each request
 * is received, sent upstream (undici, node:http or svc's own client), answered upstream and answered to the client, plus every GC
 * pause, every message to a worker thread and svc's SQLite write transactions, written at exit as (code, ms) pairs for
 * `timeline.ts`. Recording costs two array stores per event; only the wait split below allocates
 * (two small objects and strings per upstream call).
 *
 * @example
 * BENCH_TIMELINE_FILE=/tmp/t.bin BENCH_SVC_NODE_FLAGS="--import ./dist/bench/timeline-probe.js" \
 *   BENCH_TARGETS=direct,svc-embedded BENCH_SCENARIOS=latency-1c node dist/bench/run.js
 * node dist/bench/timeline.js /tmp/t.bin
 *
 * `--import` runs it in every worker thread too; only the main thread records (a worker's exit
 * would otherwise overwrite the main thread's file).
 */

if (isMainThread) start();

function start(): void {
  const capacity = 500_000;
  const events = new Float64Array(capacity * 2);
  let n = 0;
  function record(code: number, at = performance.now()): void {
    if (n >= capacity) return;
    events[2 * n] = code;
    events[2 * n + 1] = at;
    n++;
  }

  const on = (channel: string, code: number): void => dc.subscribe(channel, () => record(code));
  // Where the main thread was while a call waited for the upstream's answer: idle in the event
  // loop's poll (libuv's idle time, exact), or waiting for a CPU while runnable (the run-queue
  // delay of /proc/thread-self/schedstat, brought up to date whenever the thread gets a CPU); the
  // rest of the wait the loop was busy. Read when a call is sent and when its answer is read.
  const stat = openSync('/proc/thread-self/schedstat', 'r');
  const statBuf = Buffer.alloc(96);
  const waitState = (channel: string): void =>
    dc.subscribe(channel, () => {
      record(codes.loopIdle, performance.eventLoopUtilization().idle);
      const n = readSync(stat, statBuf, 0, statBuf.length, 0);
      const fields = statBuf.toString('latin1', 0, n).split(' ');
      record(codes.threadQueued, Number(fields[1]) / 1e6);
    });
  on('http.server.request.start', codes.received);
  on('http.server.response.finish', codes.answered);
  // Each upstream client's channels: the call created, its request sent, its answer read (the
  // main thread's state is read at the last two). undici; node:http's client; svc's own
  // (kernel/upstream/connection.ts), which publishes the request handed to the socket and the
  // answer's head.
  const clients: Array<[created: string, sent: string, answered: string, waits: boolean]> = [
    ['undici:request:create', 'undici:client:sendHeaders', 'undici:request:headers', false],
    ['http.client.request.created', 'http.client.request.start', 'http.client.response.finish', true],
    ['svc.upstream.request.sent', 'svc.upstream.request.sent', 'svc.upstream.response.head', true],
  ];
  for (const [created, sent, answered, waits] of clients) {
    on(created, codes.upstreamCreated);
    on(sent, codes.upstreamHeadersSent);
    on(answered, codes.upstreamAnswered);
    if (waits) {
      waitState(sent);
      waitState(answered);
    }
  }
  // svc's SQLite write transactions on the event loop (kernel/store/sqlite-writer.ts): the group commit.
  on('svc.store.transaction.start', codes.transactionStart);
  on('svc.store.transaction.end', codes.transactionEnd);

  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      record(codes.gcStart, e.startTime);
      record(codes.gcEnd, e.startTime + e.duration);
    }
  }).observe({ entryTypes: ['gc'] });

  // Messages to worker threads (svc's SQLite writer, the classifier): when another thread is woken.
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
    record(codes.workerPost);
    return post.apply(this, args);
  };

  process.on('exit', () => {
    writeFileSync(process.env.BENCH_TIMELINE_FILE ?? `timeline-${process.pid}.bin`, Buffer.from(events.buffer, 0, n * 16));
  });
}
