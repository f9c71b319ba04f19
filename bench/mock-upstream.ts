import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';

/**
 * The benchmark's upstream: a Chat Completions server that does as little as possible per request
 * (replies are serialized once and cached), so what the targets add stands out. Unlike
 * test/support/mock-upstream.ts it records nothing and is not scriptable per test.
 *
 * Each request's shape comes from, in order of precedence: headers `x-mock-delay-ms`,
 * `x-mock-chunks`, `x-mock-gap-ms`; the query string `delay_ms`, `chunks`, `gap_ms`; the requested
 * model id `bench-d<delay>-c<chunks>-g<gap>` (any part optional, e.g. `bench-d50`). The model id
 * is the one channel every target passes through untouched (svc strips `mock:`), so one mock
 * serves every scenario.
 *
 * @example
 * node dist/bench/mock-upstream.js 0   # prints `ready <port>` once listening on 127.0.0.1
 */

/** How one reply behaves. */
export interface Shape {
  /** Pause before the status line. */
  delayMs: number;
  /** Content chunks of a streamed reply. */
  chunks: number;
  /** Pause between two content chunks. */
  gapMs: number;
}

const usage = { prompt_tokens: 24, completion_tokens: 20, total_tokens: 44 };
const head = { id: 'chatcmpl-bench', created: 1_790_000_000, model: 'bench', system_fingerprint: 'fp_bench' };

/** The whole reply, serialized once. */
const whole = Buffer.from(
  JSON.stringify({
    ...head,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage,
  }),
);

const frame = (o: unknown): Buffer => Buffer.from(`data: ${JSON.stringify(o)}\n\n`);
const chunk = (delta: Record<string, unknown>, finish: string | null = null): Buffer =>
  frame({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });

/** Streamed replies by chunk count: the content frames, and the tail (finish, usage, [DONE]). */
const streams = new Map<number, { frames: Buffer[]; tail: Buffer; tailWithUsage: Buffer }>();

function streamOf(n: number) {
  let s = streams.get(n);
  if (!s) {
    const frames = Array.from({ length: n }, (_, i) => chunk(i === 0 ? { role: 'assistant', content: 'Hello' } : { content: ' word' }));
    const finish = chunk({}, 'stop');
    const done = Buffer.from('data: [DONE]\n\n');
    const usageFrame = frame({ ...head, object: 'chat.completion.chunk', choices: [], usage });
    s = { frames, tail: Buffer.concat([finish, done]), tailWithUsage: Buffer.concat([finish, usageFrame, done]) };
    streams.set(n, s);
  }
  return s;
}

const int = (v: string | string[] | null | undefined): number | undefined => {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return v === undefined || v === null || v === '' || !Number.isFinite(n) || n < 0 ? undefined : Math.floor(n);
};

/** The reply shape for one request (see the file comment for the precedence). */
export function shapeOf(req: IncomingMessage, model: string | undefined): Shape {
  const q = req.url && req.url.includes('?') ? new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1)) : undefined;
  const m = /^bench(?:-d(\d+))?(?:-c(\d+))?(?:-g(\d+))?$/.exec(model ?? '');
  return {
    delayMs: int(req.headers['x-mock-delay-ms']) ?? int(q?.get('delay_ms')) ?? int(m?.[1]) ?? 0,
    chunks: Math.max(1, int(req.headers['x-mock-chunks']) ?? int(q?.get('chunks')) ?? int(m?.[2]) ?? 20),
    gapMs: int(req.headers['x-mock-gap-ms']) ?? int(q?.get('gap_ms')) ?? int(m?.[3]) ?? 0,
  };
}

const later = (ms: number, fn: () => void): void => {
  if (ms > 0) setTimeout(fn, ms);
  else fn();
};

function sendWhole(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': whole.length });
  res.end(whole);
}

function sendStream(res: ServerResponse, shape: Shape, withUsage: boolean): void {
  const s = streamOf(shape.chunks);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    const last = i === s.frames.length - 1;
    if (last) res.end(Buffer.concat([s.frames[i]!, withUsage ? s.tailWithUsage : s.tail]));
    else {
      res.write(s.frames[i++]!);
      later(shape.gapMs, next);
    }
  };
  next();
}

function notFound(res: ServerResponse): void {
  const body = JSON.stringify({ error: { message: 'Invalid URL', type: 'invalid_request_error', param: null, code: null } });
  res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  if (req.method === 'GET' && path.endsWith('/models')) {
    const body = JSON.stringify({ object: 'list', data: [{ id: 'bench', object: 'model', created: 1_790_000_000, owned_by: 'bench' }] });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return;
  }
  if (req.method !== 'POST' || !path.endsWith('/chat/completions')) return notFound(res);
  const parts: Buffer[] = [];
  req.on('data', (b: Buffer) => parts.push(b));
  req.on('end', () => {
    let body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } } = {};
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as typeof body;
    } catch {
      // A body that is not JSON still gets the default reply: the mock measures, it does not validate.
    }
    const shape = shapeOf(req, body.model);
    later(shape.delayMs, () => {
      if (res.destroyed) return;
      if (body.stream === true) sendStream(res, shape, body.stream_options?.include_usage === true);
      else sendWhole(res);
    });
  });
}

/** Starts the mock on 127.0.0.1; resolves with its port. */
export function startMock(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer({ keepAliveTimeout: 65_000 }, handle);
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const a = server.address();
      resolve({
        port: typeof a === 'object' && a ? a.port : port,
        close: () => new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { port } = await startMock(Number(process.argv[2] ?? 0));
  process.stdout.write(`ready ${port}\n`);
}
