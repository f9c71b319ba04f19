import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { dropResponse } from './mock-server.js';
import { readFileSync } from 'node:fs';
import type { ToolCall } from '../../kernel/index.js';

/**
 * The scriptable upstream model provider that every end-to-end test and benchmark talks to: a real
 * HTTP server on 127.0.0.1 speaking the OpenAI wire format (POST /v1/chat/completions, whole or
 * SSE; GET /v1/models), recording each request, and scripted per request with `enqueue`.
 *
 * @example
 * const mock = new MockUpstream({ apiKey: 'sk-test' });
 * await mock.start();                       // mock.url === 'http://127.0.0.1:PORT/v1'
 * mock.enqueue({ chunks: ['Hel', 'lo'], gapMs: 50 });
 * mock.enqueue({ error: vendorError('openai-rate-limit') });
 * …; mock.requests[0].body.max_tokens; await mock.requests[0].settled; // 'finished' | 'aborted'
 * await mock.stop();
 */

/** Source folder of recorded vendor bodies (from dist/test/support/ up to the package root). */
export const fixturesDir = new URL('../../../providers/openai-compatible/__fixtures__/', import.meta.url);

/** A recorded fixture file's text, e.g. `readFixture('openai-text.chunks.txt')`. */
export function readFixture(file: string): string {
  return readFileSync(new URL(file, fixturesDir), 'utf8');
}

/** A recorded vendor error: `{ source, status, headers?, body }`. */
export interface ErrorFixture {
  source?: string;
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A recorded vendor error by name, e.g. `vendorError('vllm-context-length')`, usable as `{ error }`. */
export function vendorError(name: string): ErrorFixture {
  return JSON.parse(readFixture(`${name}.error.json`)) as ErrorFixture;
}

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
}

/** One scripted answer. Fields combine: `delayMs` waits first; `raw`, `hang`, `error` win over replies. */
export interface Behaviour {
  /** A whole reply (JSON), or SSE when the request has `stream: true` (split into words). */
  reply?: { content?: string | null; tool_calls?: ToolCall[]; usage?: MockUsage; finish_reason?: string };
  /** Stream these content pieces (one chunk each); a non-stream request gets them joined. */
  chunks?: string[];
  /** Pause between two stream chunks. */
  gapMs?: number;
  usage?: MockUsage;
  /** Pause before the response headers. */
  delayMs?: number;
  /** Answer with this status, body (object sent as JSON, string sent as is) and headers. */
  error?: ErrorFixture;
  /** Write this many chunks (or part of a whole body), then destroy the socket. */
  breakAfter?: number;
  /** Never answer; the socket stays open until the client leaves or the mock stops. */
  hang?: boolean;
  /** Streams: pause after the headers, before the first chunk (a slow first token). */
  firstChunkDelayMs?: number;
  /** Streams: write this many chunks, then go silent with the connection open (a stall). */
  stallAfter?: number;
  /** Streams: after this many chunks, write `malformedCount` (default 1) unparsable `data:` events. */
  malformedAfter?: number;
  malformedCount?: number;
  /** Streams: send the finish chunk and usage, then end the body without `data: [DONE]`. */
  noDone?: boolean;
  /** Report this usage whatever was produced (a misbehaving upstream), whole and streamed. */
  reportUsage?: MockUsage;
  /** Escape hatch: answer however you like. */
  raw?: (req: IncomingMessage, res: ServerResponse, record: RecordedRequest) => void;
}

/** What the mock received. `settled` tells whether the response finished or the client left first. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined if none or not JSON); `any` so tests can read fields directly. */
  body: any;
  text: string;
  settled: Promise<'finished' | 'aborted'>;
}

type Route = 'chat' | 'models';
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
/** The mock's token count: about four characters a token, at least one for non-empty text. */
export const approxTokens = (text: string): number => (text ? Math.max(1, Math.ceil(text.length / 4)) : 0);

function promptText(body: { messages?: Array<{ content?: unknown }> } | undefined): string {
  return (body?.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p: { text?: string }) => p.text ?? '').join('') : ''))
    .join('\n');
}

export class MockUpstream {
  private server: Server;
  private sockets = new Set<Socket>();
  private queues: Record<Route, Behaviour[]> = { chat: [], models: [] };
  private seq = 0;
  readonly requests: RecordedRequest[] = [];
  /** Used when the queue is empty. */
  defaultBehaviour: Behaviour = { reply: { content: 'Hello from the mock.' } };
  /** When set and the queue is empty, picks a chat request's answer from its body (concurrent conversations); undefined falls back to `defaultBehaviour`. */
  respond?: (body: any) => Behaviour | undefined;
  /** Ids listed by GET /v1/models. */
  models: string[] = ['mock-model'];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  connectionsOpened = 0;
  port = 0;

  /**
   * `apiKey`: when set, requests without `Authorization: Bearer <apiKey>` get OpenAI's real 401 body.
   * `record: false` keeps `requests` empty (long benchmark runs).
   */
  constructor(private readonly options: { apiKey?: string; record?: boolean } = {}) {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.connectionsOpened++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async start(): Promise<this> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : 0;
    return this;
  }

  /** Scripts the next chat completion (FIFO), or the next GET /models with `route: 'models'`. */
  enqueue(behaviour: Behaviour, route: Route = 'chat'): this {
    this.queues[route].push(behaviour);
    return this;
  }

  reset(): void {
    this.queues = { chat: [], models: [] };
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((done) => this.server.close(() => done()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const settled = new Promise<'finished' | 'aborted'>((done) => {
      res.on('finish', () => done('finished'));
      res.on('close', () => done(res.writableFinished ? 'finished' : 'aborted'));
    });
    const path = (req.url ?? '/').split('?')[0]!;
    const record: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, text, settled };
    if (this.options.record !== false) this.requests.push(record);
    const route: Route | undefined = req.method === 'POST' && path === '/v1/chat/completions' ? 'chat' : req.method === 'GET' && path === '/v1/models' ? 'models' : undefined;
    if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) return this.send(res, vendorError('openai-invalid-api-key'));
    if (!route) {
      const e = vendorError('openai-invalid-url');
      return this.send(res, { ...e, body: { error: { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null } } });
    }
    const b = this.queues[route].shift() ?? (route === 'chat' ? (this.respond?.(body) ?? this.defaultBehaviour) : {});
    if (b.delayMs) await sleep(b.delayMs);
    if (res.destroyed) return;
    if (b.raw) return b.raw(req, res, record);
    if (b.hang) return;
    if (b.error) return this.send(res, b.error);
    if (route === 'models') return this.json(res, { object: 'list', data: this.models.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'mock' })) });
    const request = body as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean }; messages?: Array<{ content?: unknown }> } | undefined;
    const content = b.chunks ? b.chunks.join('') : b.reply?.content === undefined ? 'Hello from the mock.' : b.reply.content;
    const u = b.reportUsage ?? b.usage ?? b.reply?.usage ?? { prompt_tokens: approxTokens(promptText(request)), completion_tokens: approxTokens(content ?? '') };
    const usage = { ...u, total_tokens: u.total_tokens ?? u.prompt_tokens + u.completion_tokens };
    const id = `chatcmpl-mock${++this.seq}`;
    const head = { id, created: Math.floor(Date.now() / 1000), model: request?.model ?? 'mock-model', system_fingerprint: 'fp_mock' };
    const toolCalls = b.reply?.tool_calls;
    const finish = b.reply?.finish_reason ?? (toolCalls?.length ? 'tool_calls' : 'stop');
    if (request?.stream !== true) {
      const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
      if (toolCalls?.length) message.tool_calls = toolCalls;
      const reply = { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage };
      if (b.breakAfter !== undefined) return this.cut(res, JSON.stringify(reply));
      return this.json(res, reply);
    }
    const pieces = b.chunks ?? (content ?? '').split(/(?=\s)/).filter(Boolean);
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
    const frames = pieces.map((p, i) => chunk(i === 0 ? { role: 'assistant', content: p } : { content: p }));
    if (toolCalls?.length) {
      toolCalls.forEach((t, index) => frames.push(chunk({ ...(frames.length === 0 ? { role: 'assistant' } : {}), tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } }] })));
      toolCalls.forEach((t, index) => frames.push(chunk({ tool_calls: [{ index, function: { arguments: t.function.arguments } }] })));
    }
    frames.push(chunk({}, finish));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const write = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    if (b.firstChunkDelayMs) await sleep(b.firstChunkDelayMs);
    for (let i = 0; i < frames.length; i++) {
      if (b.breakAfter !== undefined && i >= b.breakAfter) return dropResponse(res);
      if (b.stallAfter !== undefined && i >= b.stallAfter) return; // silent, connection open
      if (i === b.malformedAfter) for (let k = 0; k < (b.malformedCount ?? 1); k++) res.write('data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"trunc\n\n');
      if (i > 0 && b.gapMs && i < pieces.length) await sleep(b.gapMs);
      if (res.destroyed) return;
      write(frames[i]);
    }
    if (b.breakAfter !== undefined) return dropResponse(res); // all chunks, then EOF without [DONE]
    if (request.stream_options?.include_usage) write({ ...head, object: 'chat.completion.chunk', choices: [], usage });
    if (b.noDone) return void res.end();
    res.end('data: [DONE]\n\n');
  }

  private json(res: ServerResponse, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private send(res: ServerResponse, e: ErrorFixture): void {
    const text = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...e.headers });
    res.end(text);
  }

  /** Headers and half a body, then a dead socket. */
  private cut(res: ServerResponse, text: string): void {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.write(text.slice(0, Math.floor(text.length / 2)));
    dropResponse(res);
  }

}
