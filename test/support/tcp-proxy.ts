import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay to a real dependency (PostgreSQL, Redis) that a test can cut, to see how the
 * service behaves when the dependency goes away and comes back.
 */
export class TcpProxy {
  private server: Server;
  private sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {
    this.server = this.make();
  }

  private make(): Server {
    return createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async start(port = 0): Promise<number> {
    await new Promise<void>((done) => this.server.listen(port, '127.0.0.1', done));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : port;
    return this.port;
  }

  /** Drops every connection and stops listening: the dependency looks down. */
  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  /** Listens again on the same port: the dependency is back. */
  async restore(): Promise<void> {
    this.server = this.make();
    await this.start(this.port);
  }
}
