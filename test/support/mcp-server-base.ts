import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/**
 * A Node request as the web `Request` the SDK's fetch-style handlers take. Its `signal` aborts when
 * the client goes away before the response is complete, as in Node adapters of real deployments
 * (the 2026-07-28 revision cancels a call by closing its response stream).
 */
export function webRequest(req: IncomingMessage, origin: string, res?: ServerResponse, body?: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const gone = new AbortController();
  res?.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return new Request(`${origin}${req.url}`, {
    method: req.method, headers, signal: gone.signal, ...(body !== undefined ? { body } : hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a web `Response` (streamed bodies included) to the Node response; a client that left cancels the body. */
export async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  for (let r = await reader.read(); !r.done; r = await reader.read()) res.write(r.value);
  res.end();
}

/** A JSON-RPC request or notification a test server received. */
export interface Received { method: string; id?: unknown; params?: any }

/** A POST body as text and as parsed (for the SDK's `parsedBody`), with the JSON-RPC messages in it (one or a batch). */
export async function readJsonRpc(req: IncomingMessage): Promise<{ text: string; body: unknown; messages: Received[] }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown = null;
  try {
    body = JSON.parse(text || 'null');
  } catch {
    // the SDK answers a body that is not JSON itself
  }
  const list = (Array.isArray(body) ? body : [body]) as Array<Partial<Received> | null>;
  return { text, body, messages: list.filter((m): m is Received => typeof m?.method === 'string').map((m) => ({ method: m.method, id: m.id, params: m.params })) };
}

/** A test HTTP server on 127.0.0.1 and a free port whose `stop` also ends open streams (SSE, hanging calls). */
export abstract class LocalHttpServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  readonly calls: Array<{ tool: string; args: Record<string, unknown> }> = [];
  /** Every JSON-RPC message POSTed to the server, in order (servers that read their bodies record them). */
  readonly received: Received[] = [];
  /** Tools whose running call was cancelled (its signal aborted: a cancel notification, or the call's stream closed). */
  readonly cancelled: string[] = [];
  port = 0;

  constructor() {
    this.server = createServer((req, res) => void this.serve(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  protected abstract serve(req: IncomingMessage, res: ServerResponse): Promise<void>;

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}
