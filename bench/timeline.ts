import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** What `timeline-probe.ts` records; each event is (code, performance.now() in ms). */
export const codes = {
  received: 1,
  upstreamCreated: 2,
  upstreamHeadersSent: 3,
  upstreamAnswered: 5,
  answered: 7,
  gcStart: 10,
  gcEnd: 20,
  workerPost: 30,
  /** svc's SQLite write transaction (the group commit) began, and ended. */
  transactionStart: 50,
  transactionEnd: 51,
  /** The event loop's idle time so far, then the main thread's time waiting for a CPU (runnable), in ms (in the time slot), recorded right after `upstreamHeadersSent` and `upstreamAnswered`. */
  loopIdle: 40,
  threadQueued: 41,
} as const;

/** One request at one connection: when it arrived, went upstream, was answered upstream, and answered. */
interface Request { received: number; created?: number; sent?: number; upstream?: number; answered?: number; idleSent?: number; idleAnswered?: number; queuedSent?: number; queuedAnswered?: number }
interface Pause { start: number; end: number }

const segments: Array<[string, (r: Required<Request>) => number]> = [
  ['received → upstream call made', (r) => r.created - r.received],
  ['call made → headers sent', (r) => r.sent - r.created],
  ['headers sent → upstream answer read', (r) => r.upstream - r.sent],
  ['upstream answer → client answered', (r) => r.answered - r.upstream],
  ['whole request', (r) => r.answered - r.received],
];

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const us = (ms: number): string => (ms * 1000).toFixed(0);

/**
 * Splits every request's time into the four segments above and compares the slowest 1 % with the
 * rest: which segment holds their extra time, and how many overlapped a GC pause or had a message
 * to a worker thread (another thread woken) during them. Meant for a one-connection load, where
 * events follow each other request by request; only the last `share` of the requests is read
 * (the measurement, not the warm-up).
 */
export function analyze(buf: Buffer, share = 0.5): string {
  const f = new Float64Array(buf.buffer, buf.byteOffset, buf.length / 8);
  const requests: Request[] = [];
  const pauses: Pause[] = [];
  const posts: number[] = [];
  const transactions: Pause[] = [];
  let current: Request | undefined;
  for (let i = 0; i < f.length; i += 2) {
    const code = f[i]!;
    const at = f[i + 1]!;
    if (code === codes.gcStart) pauses.push({ start: at, end: at });
    else if (code === codes.gcEnd) pauses.at(-1)!.end = at;
    else if (code === codes.workerPost) posts.push(at);
    else if (code === codes.transactionStart) transactions.push({ start: at, end: at });
    else if (code === codes.transactionEnd && transactions.length > 0) transactions.at(-1)!.end = at;
    else if (code === codes.received) requests.push((current = { received: at }));
    else if (current && code === codes.upstreamCreated) current.created ??= at;
    else if (current && code === codes.upstreamHeadersSent) current.sent ??= at;
    else if (current && code === codes.upstreamAnswered) current.upstream ??= at;
    else if (current && code === codes.answered) current.answered ??= at;
    else if (current && code === codes.loopIdle) {
      if (current.upstream === undefined) current.idleSent ??= at;
      else current.idleAnswered ??= at;
    } else if (current && code === codes.threadQueued) {
      if (current.upstream === undefined) current.queuedSent ??= at;
      else current.queuedAnswered ??= at;
    }
  }
  const whole = requests.filter((r): r is Required<Request> => r.created !== undefined && r.sent !== undefined && r.upstream !== undefined && r.answered !== undefined);
  const use = whole.slice(-Math.floor(whole.length * share));
  if (use.length < 100) return `Only ${use.length} complete requests: was the load one connection, and the gateway's upstream client one the probe knows?\n`;
  const from = use[0]!.received;
  const to = use.at(-1)!.answered;
  const inWindow = pauses.filter((p) => p.end >= from && p.start <= to);
  const overlapsPause = (r: Required<Request>): boolean => inWindow.some((p) => p.start < r.answered && p.end > r.received);
  const hadPost = (r: Required<Request>): boolean => posts.some((t) => t >= r.received && t < r.answered);
  const txInWindow = transactions.filter((p) => p.end >= from && p.start <= to);
  const overlapsTx = (r: Required<Request>): boolean => txInWindow.some((p) => p.start < r.answered && p.end > r.received);
  // Of the wait for the upstream's answer, how much the event loop was idle, and how much the main
  // thread was runnable but waiting for a CPU; the rest the loop was busy.
  const busyShare = (rs: Required<Request>[]): string => {
    const xs = rs.filter((r) => r.idleSent !== undefined && r.idleAnswered !== undefined && r.queuedSent !== undefined && r.queuedAnswered !== undefined);
    if (xs.length === 0) return 'not recorded';
    const sum = (f: (r: Required<Request>) => number) => xs.reduce((a, r) => a + f(r), 0) / xs.length;
    const wait = sum((r) => r.upstream - r.sent);
    const idle = sum((r) => r.idleAnswered - r.idleSent);
    const queued = sum((r) => r.queuedAnswered - r.queuedSent);
    return `wait ${us(wait)} µs: loop idle ${us(idle)} µs, queued for a CPU ${us(queued)} µs, loop busy ${us(wait - idle - queued)} µs`;
  };
  const threshold = quantile(use.map((r) => r.answered - r.received), 0.99);
  const slow = use.filter((r) => r.answered - r.received >= threshold);
  const rest = use.filter((r) => r.answered - r.received < threshold);
  const lines = [
    `${use.length} requests; the slowest 1 %: ${slow.length} (≥ ${us(threshold)} µs).`,
    '',
    '| segment | p50 µs | p90 µs | p99 µs | mean of the slowest 1 % µs | mean of the rest µs |',
    '|---|---:|---:|---:|---:|---:|',
    ...segments.map(([name, fn]) => {
      const xs = use.map(fn);
      return `| ${name} | ${us(quantile(xs, 0.5))} | ${us(quantile(xs, 0.9))} | ${us(quantile(xs, 0.99))} | ${us(mean(slow.map(fn)))} | ${us(mean(rest.map(fn)))} |`;
    }),
    '',
    `GC pauses in the window: ${inWindow.length}, mean ${mean(inWindow.map((p) => p.end - p.start)).toFixed(2)} ms.`,
    `Slowest 1 % overlapping a GC pause: ${slow.filter(overlapsPause).length} of ${slow.length} (all requests: ${((100 * use.filter(overlapsPause).length) / use.length).toFixed(1)} %).`,
    `Main thread while waiting for the upstream's answer, mean: slowest 1 % ${busyShare(slow)}; the rest ${busyShare(rest)}.`,
    `Slowest 1 % without a pause but with a message to a worker thread during them: ${slow.filter((r) => !overlapsPause(r) && hadPost(r)).length} of ${slow.filter((r) => !overlapsPause(r)).length} (all requests: ${((100 * use.filter(hadPost).length) / use.length).toFixed(1)} %).`,
  ];
  if (txInWindow.length > 0) {
    const lengths = txInWindow.map((p) => p.end - p.start);
    lines.push(
      `Write transactions on the loop in the window: ${txInWindow.length}, p50 ${us(quantile(lengths, 0.5))} µs, p99 ${us(quantile(lengths, 0.99))} µs (their waiters' continuations run right after and are not counted).`,
      `Slowest 1 % overlapping a write transaction: ${slow.filter(overlapsTx).length} of ${slow.length}; without a GC pause: ${slow.filter((r) => overlapsTx(r) && !overlapsPause(r)).length} (all requests: ${((100 * use.filter(overlapsTx).length) / use.length).toFixed(1)} %; a request that arrived during one is counted only from when it was read).`,
    );
  }
  return lines.join('\n') + '\n';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, share] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/timeline.js FILE.bin [share of the requests to read, default 0.5]\n');
    process.exit(2);
  }
  process.stdout.write(analyze(readFileSync(file), share ? Number(share) : undefined));
}
