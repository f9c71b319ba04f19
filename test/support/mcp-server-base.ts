import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/** A Node request as the web `Request` the SDK's fetch-style handlers take. */
export function webRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`${origin}${req.url}`, {
    method: req.method, headers, ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a web `Response` (streamed bodies included) to the Node response. */
export async function sendWeb(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) res.write(part);
  res.end();
}

/** A test HTTP server on 127.0.0.1 and a free port whose `stop` also ends open streams (SSE, hanging calls). */
export abstract class LocalHttpServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  readonly calls: Array<{ tool: string; args: Record<string, unknown> }> = [];
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
