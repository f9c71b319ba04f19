import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

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
