import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay to a real dependency (PostgreSQL, Redis) that a test can cut (connections refused
 * and dropped) or hang (connections stay open, every byte is held until it heals), to see how
 * the service behaves when the dependency goes away or goes silent, and comes back.
 */
export class TcpProxy {
  private server: Server;
  private sockets = new Set<Socket>();
  private held: Array<() => void> = [];
  private hanging = false;
  /** Bytes held since the last heal (the test can see that traffic was attempted). */
  heldBytes = 0;
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
      this.relay(client, upstream);
      this.relay(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** Forwards `from` → `to`, or holds each chunk (in order) while hanging. */
  private relay(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!this.hanging) {
        to.write(chunk);
        return;
      }
      this.heldBytes += chunk.length;
      this.held.push(() => {
        if (!to.destroyed) to.write(chunk);
      });
    });
  }

  async start(port = 0): Promise<number> {
    await new Promise<void>((done) => this.server.listen(port, '127.0.0.1', done));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : port;
    return this.port;
  }

  /** Every connection stays open but nothing gets through: the dependency is silent. */
  hang(): void {
    this.hanging = true;
  }

  /** Delivers what was held, in order, and relays again. */
  heal(): void {
    this.hanging = false;
    for (const send of this.held.splice(0)) send();
  }

  /** Drops every connection and stops listening: the dependency looks down. */
  async cut(): Promise<void> {
    this.heal();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  /** Listens again on the same port: the dependency is back. */
  async restore(): Promise<void> {
    this.server = this.make();
    await this.start(this.port);
  }
}
