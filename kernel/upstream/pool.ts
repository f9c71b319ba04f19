import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import { abortError, Connection, poolClosedError, type Call, type ConnectionOwner, type UpstreamBody } from './connection.js';
import type { CallSignal } from './http.js';
import { httpToken } from './response-parser.js';

/**
 * A provider's keep-alive connections, speaking HTTP/1.1 itself (connection.ts, response-parser.ts)
 * rather than through node:http's client. Measured (bench/README.md "Fifteenth look"): a node:http
 * round trip through a keep-alive Agent cost its caller 38 µs of CPU and ~12 KB of garbage, a
 * ClientRequest, an IncomingMessage, the Agent's bookkeeping and header validation per call; the
 * same round trip over a socket that writes one prebuilt head and slices the reply cost 11 µs.
 * Before that the pool used undici, which left 4.1 KB promoted per request ("Sixth look").
 */

/** An upstream answer: status, headers (lower-case names) and the body as a byte stream. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

export interface UpstreamRequest {
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /**
   * The request line and headers made once by `prepare` for a call repeated with only its body
   * changing (a chat call): `path`, `method` and `headers` are then not read again, nor checked.
   */
  prepared?: PreparedHead;
  /** The body's length in bytes when the caller knows it (a stream's; a string's is measured here). */
  length?: number;
  body?: string | Buffer | Readable;
  signal?: CallSignal;
}

export interface UpstreamPoolOptions {
  /** Most connections open to the origin at once; further calls wait for a free one. */
  connections: number;
  /** Longest wait for a new connection to be established (TLS handshake included), in milliseconds. */
  connectTimeout: number;
  /** How long an idle connection is kept: under the 5 s idle close of uvicorn, Node and httplib. */
  keepAliveTimeout?: number;
  /**
   * Certificates to trust instead of the system's for an https origin (a private CA). Operators
   * usually set NODE_EXTRA_CA_CERTS instead, which adds to the system's; the tests use this.
   */
  ca?: string | Buffer;
}

/** The error a connect that outlived `connectTimeout` fails with (transportFailureOf: 'timeout'). */
export const CONNECT_TIMEOUT = 'UPSTREAM_CONNECT_TIMEOUT';

/** A request line and header lines checked and joined once (UpstreamPool.prepare); the length comes per call. */
export interface PreparedHead {
  readonly text: string;
  /** Whether `headers` named a Content-Length itself. */
  readonly length: boolean;
}

/** A header value or path that would split the request (CR, LF, NUL), as node:http refuses them. */
const unsafeValue = /[\r\n\0]/;
const unsafePath = /[\s\0]/;

/**
 * A request with a string body as the bytes sent: the head's lines (latin1, as node:http writes
 * them), its Content-Length and the body (UTF-8) written straight into one buffer. Joining them as
 * text first made a string per piece and a flat copy of the whole at the socket write.
 */
function wire(lines: string, body: string): Buffer {
  const size = Buffer.byteLength(body);
  const length = String(size);
  const buf = Buffer.allocUnsafe(lines.length + 20 + length.length + size);
  let at = buf.write(lines, 0, 'latin1');
  at += buf.write('content-length: ', at, 'latin1');
  at += buf.write(length, at, 'latin1');
  at += buf.write('\r\n\r\n', at, 'latin1');
  buf.write(body, at, 'utf8');
  return buf;
}

/**
 * @example
 * const pool = new UpstreamPool(new URL('https://api.openai.com'), { connections: 128, connectTimeout: 5000 });
 * const res = await pool.request({ path: '/v1/models', method: 'GET', signal });
 */
export class UpstreamPool implements ConnectionOwner {
  /** The host name without an IPv6 literal's brackets, worked out once rather than per call. */
  private readonly hostname: string;
  private readonly port: number;
  private readonly secure: boolean;
  /** The Host header line (the origin's host, its port only when not the default). */
  private readonly hostLine: string;
  private readonly keepAliveMs: number;
  /** Every open connection; the idle ones, last used on top (reused first, so the rest age out). */
  private readonly all = new Set<Connection>();
  private readonly idle: Connection[] = [];
  /** Calls waiting for a connection when `connections` are busy. */
  private readonly waiting: Call[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closed = false;

  constructor(origin: URL, private readonly options: UpstreamPoolOptions) {
    this.secure = origin.protocol === 'https:';
    this.hostname = origin.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(origin.port) || (this.secure ? 443 : 80);
    this.hostLine = `host: ${origin.host}\r\n`;
    this.keepAliveMs = options.keepAliveTimeout ?? 4000;
  }

  /** Sends one request; resolves with the response once its headers arrived (the body is the caller's to read). */
  request(req: UpstreamRequest): Promise<UpstreamResponse> {
    if (this.closed) return Promise.reject(poolClosedError());
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const call: Call = { head: '', body: req.body, chunked: false, signal: req.signal, resolve, reject };
      try {
        this.writeHead(req, call);
      } catch (err) {
        return reject(err);
      }
      this.inFlight++;
      let conn = this.idle.pop();
      while (conn && this.stale(conn)) {
        conn.socket.destroy();
        conn = this.idle.pop();
      }
      if (conn) conn.start(call);
      else if (this.all.size < this.options.connections) this.open().start(call);
      else this.wait(call);
    });
  }

  /**
   * A request line and headers checked and joined once, for calls that differ only in their body
   * (UpstreamRequest.prepared): a chat call then writes one cached string and its length.
   */
  prepare(method: UpstreamRequest['method'], path: string, headers?: Record<string, string>): PreparedHead {
    if (unsafePath.test(path)) throw Object.assign(new TypeError('Request path contains unescaped characters'), { code: 'ERR_UNESCAPED_CHARACTERS' });
    let text = `${method} ${path} HTTP/1.1\r\n${this.hostLine}`;
    let length = false;
    if (headers) {
      for (const name in headers) {
        const value = headers[name]!;
        const lower = name.toLowerCase();
        if (lower === 'host' || lower === 'transfer-encoding' || lower === 'connection') continue;
        if (lower === 'content-length') length = true;
        if (!httpToken.test(name)) throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' });
        if (unsafeValue.test(value)) throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), { code: 'ERR_INVALID_CHAR' });
        text += `${name}: ${value}\r\n`;
      }
    }
    return { text, length };
  }

  /**
   * The call's request line and headers as one string, Host first. A whole body's Content-Length is set
   * here; a stream without one is sent chunked. Names and values are checked as node:http does.
   */
  private writeHead(req: UpstreamRequest, call: Call): void {
    const { text, length } = req.prepared ?? this.prepare(req.method, req.path, req.headers);
    const body = req.body;
    if (typeof body === 'string' && !length) {
      call.head = '';
      call.body = wire(text, body);
    } else if (length || body === undefined) call.head = `${text}\r\n`;
    else if (req.length !== undefined) call.head = `${text}content-length: ${req.length}\r\n\r\n`;
    else if (Buffer.isBuffer(body)) call.head = `${text}content-length: ${body.length}\r\n\r\n`;
    else {
      call.head = `${text}transfer-encoding: chunked\r\n\r\n`;
      call.chunked = true;
    }
  }

  /** A new connection; a call written to it waits in the socket until it is connected. */
  private open(): Connection {
    const socket = this.secure
      ? tls.connect({ host: this.hostname, port: this.port, servername: net.isIP(this.hostname) ? undefined : this.hostname, ALPNProtocols: ['http/1.1'], ca: this.options.ca })
      : net.connect({ host: this.hostname, port: this.port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    // The deadline covers the TLS handshake too: a TLS peer that accepts TCP and never answers the
    // handshake is as dead as one that never accepts.
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('connect timed out'), { code: CONNECT_TIMEOUT })), this.options.connectTimeout);
    socket.once(this.secure ? 'secureConnect' : 'connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    const conn = new Connection(socket, this);
    this.all.add(conn);
    return conn;
  }

  /** Queues a call until a connection is free; its signal still ends it while it waits. */
  private wait(call: Call): void {
    this.waiting.push(call);
    const signal = call.signal;
    if (!signal) return;
    const onAbort = (): void => {
      const at = this.waiting.indexOf(call);
      if (at < 0) return;
      this.waiting.splice(at, 1);
      this.settled();
      call.reject(abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Once it has a connection the connection follows the signal; this listener goes.
    const start = call.resolve;
    const reject = call.reject;
    const take = (): void => signal.removeEventListener('abort', onAbort);
    call.resolve = (res) => (take(), start(res));
    call.reject = (err) => (take(), reject(err));
  }

  finished(conn: Connection, reusable: boolean): void {
    this.settled();
    if (!reusable || this.closed) {
      if (this.closed) conn.socket.destroy();
      return this.next();
    }
    const call = this.waiting.shift();
    if (call) return conn.start(call);
    conn.lastUsed = Date.now();
    this.idle.push(conn);
    this.sweeper ??= setInterval(this.sweep, 250).unref();
  }

  gone(conn: Connection): void {
    this.all.delete(conn);
    const at = this.idle.indexOf(conn);
    if (at >= 0) this.idle.splice(at, 1);
    this.next();
  }

  /** A connection was dropped: a waiting call gets a new one. */
  private next(): void {
    if (this.closed || this.waiting.length === 0 || this.all.size >= this.options.connections) return;
    this.open().start(this.waiting.shift()!);
  }

  private settled(): void {
    if (--this.inFlight === 0) this.drained?.();
  }

  /** Closed, or idle for `keepAliveTimeout` (or for less when its server said it closes sooner). */
  private stale(conn: Connection, now = Date.now()): boolean {
    return conn.socket.destroyed || now - conn.lastUsed >= Math.min(this.keepAliveMs, conn.serverIdleMs);
  }

  /** Closes the stale idle connections. */
  private readonly sweep = (): void => {
    const now = Date.now();
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const conn = this.idle[i]!;
      if (!this.stale(conn, now)) continue;
      this.idle.splice(i, 1);
      conn.socket.destroy();
    }
    if (this.idle.length === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  };

  /** Waits for the calls in flight to finish, then closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.destroyAll();
  }

  /** Closes every connection now; calls in flight fail. */
  async destroy(): Promise<void> {
    this.closed = true;
    for (const call of this.waiting.splice(0)) {
      this.settled();
      call.reject(poolClosedError());
    }
    this.destroyAll();
  }

  private destroyAll(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.idle.length = 0;
    for (const conn of this.all) conn.socket.destroy();
  }
}
