import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import type { ErrorFixture, RecordedRequest } from './mock-upstream.js';

/**
 * The plumbing every native-API mock shares (test/support/mock-anthropic.ts, mock-gemini.ts): a
 * real HTTP server on 127.0.0.1 that records each request, answers from a FIFO script per route,
 * and can send recorded error bodies, hang, or cut a response mid-way. Subclasses route requests
 * and speak their vendor's wire format.
 */

/** Closes a connection mid-response once what was written has left (a plain destroy could drop it). */
export function dropResponse(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  // A ServerResponse's writes of this turn wait in the socket, corked until the next tick; on
  // Node 24.22.3 an end() in the same turn dropped them: the end waits for the cork to lift.
  setImmediate(() => socket.end(() => socket.destroy()));
  setTimeout(() => socket.destroy(), 200).unref();
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A vendor's recorded fixture file (source folder, from dist/test/support/). */
export function vendorFixture(vendor: string, file: string): string {
  return readFileSync(new URL(`../../../providers/${vendor}/__fixtures__/${file}`, import.meta.url), 'utf8');
}

/** A vendor's recorded error `{ source, status, headers?, body }`. */
export function vendorErrorFixture(vendor: string, name: string): ErrorFixture {
  return JSON.parse(vendorFixture(vendor, `${name}.error.json`)) as ErrorFixture;
}

/** What every scripted answer may do before or instead of a normal reply. */
export interface BaseBehaviour {
  /** Pause before the response headers. */
  delayMs?: number;
  /** Answer with this recorded status, body and headers. */
  error?: ErrorFixture;
  /** Never answer; the socket stays open until the client leaves or the mock stops. */
  hang?: boolean;
  /** Escape hatch: answer however you like (e.g. a recorded `.chunks.txt` verbatim). */
  raw?: (req: IncomingMessage, res: ServerResponse, record: RecordedRequest) => void | Promise<void>;
}

export abstract class MockServer<B extends BaseBehaviour, R extends string> {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private queues = new Map<R, B[]>();
  readonly requests: RecordedRequest[] = [];
  port = 0;

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((done) => this.server.close(() => done()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Scripts the next request of `route` (FIFO). */
  enqueue(behaviour: B, route: R): this {
    const q = this.queues.get(route) ?? [];
    q.push(behaviour);
    this.queues.set(route, q);
    return this;
  }

  reset(): void {
    this.queues.clear();
    this.requests.length = 0;
  }

  /** Which route a request is, or undefined for an unknown path (answered with the vendor's 404). */
  protected abstract route(method: string, path: string, query: URLSearchParams): R | undefined;
  /** The vendor's answer when the key is missing or wrong, or undefined when it is right. */
  protected abstract refuseKey(req: IncomingMessage, query: URLSearchParams): ErrorFixture | undefined;
  protected abstract notFound(path: string): ErrorFixture;
  /** Answers a routed request with no error scripted. */
  protected abstract answer(route: R, b: B | undefined, record: RecordedRequest, res: ServerResponse, query: URLSearchParams): Promise<void> | void;

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
    const [path, search] = (req.url ?? '/').split('?') as [string, string | undefined];
    const query = new URLSearchParams(search ?? '');
    const record: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, text, settled };
    this.requests.push(record);
    const refused = this.refuseKey(req, query);
    if (refused) return this.send(res, refused);
    const route = this.route(req.method ?? 'GET', path, query);
    if (!route) return this.send(res, this.notFound(path));
    const b = this.queues.get(route)?.shift();
    if (b?.delayMs) await sleep(b.delayMs);
    if (res.destroyed) return;
    if (b?.raw) return void (await b.raw(req, res, record));
    if (b?.hang) return;
    if (b?.error) return this.send(res, b.error);
    await this.answer(route, b, record, res, query);
  }

  protected json(res: ServerResponse, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  protected send(res: ServerResponse, e: ErrorFixture): void {
    const text = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...e.headers });
    res.end(text);
  }

  /** Headers and half a body, then a dead socket. */
  protected cut(res: ServerResponse, text: string): void {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.write(text.slice(0, Math.floor(text.length / 2)));
    dropResponse(res);
  }

  /** Writes SSE frames with an optional gap, stopping (and cutting) after `breakAfter` of the counted ones. */
  protected async frames(res: ServerResponse, frames: Array<{ wire: string; counted: boolean }>, gapMs = 0, breakAfter?: number): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let counted = 0;
    for (const f of frames) {
      if (f.counted) {
        if (breakAfter !== undefined && counted >= breakAfter) return dropResponse(res);
        if (counted > 0 && gapMs) await sleep(gapMs);
        counted++;
      }
      if (res.destroyed) return;
      res.write(f.wire);
    }
    if (breakAfter !== undefined) return dropResponse(res);
    res.end();
  }
}
