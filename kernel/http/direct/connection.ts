import type { Socket } from 'node:net';
import { maxHeadBytes, parsePlainHead } from './head.js';
import { DirectRequest } from './request.js';
import { DirectResponse, type ResponseLine } from './response.js';

/** What the lane needs from the HTTP front. */
export interface LaneOptions {
  /** How long a kept-alive connection may idle between requests (node:http's keepAliveTimeout). */
  keepAliveMs: number;
  /** How long a whole request may take to arrive (node:http's requestTimeout). */
  requestTimeoutMs: number;
  /** Whether this method and path (before `?`) are answered here. */
  takes(method: string, path: string): boolean;
  /** Runs the front's handler for a request read here. */
  serve(req: DirectRequest, res: DirectResponse): void;
  /** Gives the connection to node:http (whatever it has buffered is unshifted back first). */
  handOff(socket: Socket): void;
  /** A request's body did not arrive within requestTimeoutMs and nothing was answered yet. */
  timedOut(socket: Socket): void;
}

const headEnd = Buffer.from('\r\n\r\n', 'latin1');
const noop = (): void => {};

/**
 * The front's own HTTP/1.1 reader for the model API's hot routes (docs/decisions.md "The front's
 * own HTTP/1.1 reader"). Each connection starts here: a request whose head is all in hand, plain
 * (head.ts) and for a route that takes it is read and answered here, one at a time in order; the
 * first request that is not is handed, with every byte still unread, to node:http, which keeps
 * the connection from then on. node:http's server costs about a third of what a plain request
 * costs svc on top of the bare proxy's work (bench/README.md "Twenty-fourth look").
 */
export class DirectLane {
  private readonly open = new Set<DirectConnection>();
  /** Requests read here since start (diagnostics and tests). */
  served = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(readonly options: LaneOptions) {}

  accept(socket: Socket): void {
    const conn = new DirectConnection(this, socket);
    this.open.add(conn);
    this.sweeper ??= setInterval(this.sweep, 1000).unref();
  }

  forget(conn: DirectConnection): void {
    this.open.delete(conn);
  }

  /** Closes the connections waiting for a request (node:http's closeIdleConnections). */
  closeIdle(): void {
    for (const c of this.open) if (c.idle) c.socket.destroy();
  }

  closeAll(): void {
    for (const c of this.open) c.socket.destroy();
    this.open.clear();
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Once a second: idle connections past the keep-alive time close; bodies past the request time are cut. */
  private readonly sweep = (): void => {
    const now = performance.now();
    const { keepAliveMs, requestTimeoutMs } = this.options;
    for (const c of this.open) {
      if (c.idle) {
        if (now - c.since >= keepAliveMs) c.socket.destroy();
      } else if (c.arriving && now - c.since >= requestTimeoutMs) c.timeOut();
    }
  };
}

/** One client connection while the lane reads it. */
class DirectConnection implements ResponseLine {
  private buffer: Buffer | undefined = undefined;
  private req: DirectRequest | undefined = undefined;
  private res: DirectResponse | undefined = undefined;
  /** When the connection went idle, or its request started (performance.now()). */
  since = performance.now();
  /** The client sent `connection: close`, or ended its half. */
  private closeWanted = false;
  private clientEnded = false;
  /** The socket was paused because a next request arrived before this one was answered. */
  private heldBack = false;

  constructor(
    private readonly lane: DirectLane,
    readonly socket: Socket,
  ) {
    socket.on('data', this.onData).on('end', this.onEnd).on('close', this.onClose).on('error', noop).on('drain', this.onDrain);
  }

  get keepAliveSeconds(): number {
    return Math.floor(this.lane.options.keepAliveMs / 1000);
  }

  get idle(): boolean {
    return this.req === undefined;
  }

  /** A request is in hand whose body is still arriving. */
  get arriving(): boolean {
    return this.req !== undefined && this.req.remaining > 0;
  }

  closing(): boolean {
    return this.closeWanted;
  }

  private readonly onData = (chunk: Buffer): void => {
    const req = this.req;
    if (req !== undefined && req.remaining > 0) {
      if (chunk.length <= req.remaining) {
        req.take(chunk);
        if (req.remaining === 0 && this.res!.writableFinished) this.next();
        return;
      }
      const body = chunk.subarray(0, req.remaining);
      this.keep(chunk.subarray(req.remaining));
      req.take(body);
      if (this.res!.writableFinished) this.next();
      return;
    }
    this.keep(chunk);
    if (req === undefined) this.next();
  };

  private keep(chunk: Buffer): void {
    this.buffer = this.buffer === undefined ? chunk : Buffer.concat([this.buffer, chunk]);
    // A next request before this one is answered waits, and so does the client (as with any
    // pipelining client, the answers come in order).
    if (this.req !== undefined && !this.heldBack) {
      this.heldBack = true;
      this.socket.pause();
    }
  }

  /** The next request, if one is in hand: read here, or the connection handed to node:http. */
  private next(): void {
    this.req = undefined;
    this.res = undefined;
    this.since = performance.now();
    if (this.heldBack) {
      this.heldBack = false;
      this.socket.resume();
    }
    const buf = this.buffer;
    if (buf === undefined) {
      if (this.clientEnded) this.socket.end();
      return;
    }
    const end = buf.indexOf(headEnd);
    if (end === -1 || end > maxHeadBytes) return this.handOff();
    const head = parsePlainHead(buf.toString('latin1', 0, end));
    if (head === undefined) return this.handOff();
    const q = head.url.indexOf('?');
    if (!this.lane.options.takes(head.method, q === -1 ? head.url : head.url.slice(0, q))) return this.handOff();
    const start = end + 4;
    const req = new DirectRequest(head, this.socket);
    const res = new DirectResponse(req, this);
    if (!head.keepAlive) this.closeWanted = true;
    const body = Math.min(buf.length - start, head.contentLength);
    this.buffer = buf.length > start + body ? buf.subarray(start + body) : undefined;
    if (body > 0) req.take(buf.subarray(start, start + body));
    this.req = req;
    this.res = res;
    if (this.buffer !== undefined && !this.heldBack) {
      this.heldBack = true;
      this.socket.pause();
    }
    this.lane.served++;
    this.lane.options.serve(req, res);
  }

  /** The response's last bytes went out. */
  responded(close: boolean): void {
    if (close || this.closeWanted) {
      this.closeWanted = true;
      this.socket.end();
      return;
    }
    // The body not read to its end (answered before reading): the rest is dropped as it comes
    // (the front's discardRest), then the next request.
    if (this.req !== undefined && this.req.remaining > 0) return;
    this.next();
  }

  private handOff(): void {
    const socket = this.socket;
    socket.off('data', this.onData).off('end', this.onEnd).off('close', this.onClose).off('error', noop).off('drain', this.onDrain);
    this.lane.forget(this);
    if (this.clientEnded) {
      // node:http would never hear the end it already missed.
      socket.end();
      return;
    }
    socket.pause();
    if (this.buffer !== undefined) socket.unshift(this.buffer);
    this.buffer = undefined;
    this.lane.options.handOff(socket);
    socket.resume();
  }

  /**
   * The client ended its half: as node:http does (its httpAllowHalfOpen off), a request in
   * progress is given up and the connection closed, which the response hears as its `close`.
   */
  private readonly onEnd = (): void => {
    this.clientEnded = true;
    this.closeWanted = true;
    if (this.req !== undefined && this.req.remaining > 0) this.socket.destroy();
    else this.socket.end();
  };

  private readonly onClose = (): void => {
    this.lane.forget(this);
    const req = this.req;
    if (req === undefined) return;
    if (req.remaining > 0) req.closed();
    this.res?.closed();
  };

  private readonly onDrain = (): void => {
    if (this.res?.writableNeedDrain) this.res.drained();
  };

  /** The body did not arrive in time: node:http's 408 when nothing was answered yet. */
  timeOut(): void {
    if (this.res?.headersSent) this.socket.destroy();
    else {
      this.socket.off('data', this.onData);
      this.lane.options.timedOut(this.socket);
    }
  }
}
