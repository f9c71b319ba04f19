import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * A provider's keep-alive connections: `node:http`'s Agent behind the small request shape the
 * adapters use. Not undici: measured at one connection, an undici round trip left 6.3 % of each
 * young-generation collection alive (4.1 KB promoted to the old generation per request) against
 * 0.9 % (0.16 KB) for the same round trip through a node:http keep-alive Agent, and at 64
 * connections node:http served 11 % more requests on the same CPU (bench/README.md "Sixth look").
 * Promoted bytes are what makes the old generation grow and its collections pause the replica.
 */

/** An upstream answer: status, headers (lower-case names) and the body as a byte stream. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

export interface UpstreamRequest {
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer | Readable;
  signal?: AbortSignal;
}

export interface UpstreamPoolOptions {
  /** Most connections open to the origin at once; further calls wait for a free one. */
  connections: number;
  /** Longest wait for a new connection to be established, in milliseconds. */
  connectTimeout: number;
  /** How long an idle connection is kept: under the 5 s idle close of uvicorn, Node and httplib. */
  keepAliveTimeout?: number;
}

/** The error a connect that outlived `connectTimeout` fails with (transportFailureOf: 'timeout'). */
export const CONNECT_TIMEOUT = 'UPSTREAM_CONNECT_TIMEOUT';

/**
 * @example
 * const pool = new UpstreamPool(new URL('https://api.openai.com'), { connections: 128, connectTimeout: 5000 });
 * const res = await pool.request({ path: '/v1/models', method: 'GET', signal });
 */
export class UpstreamPool {
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  /** The host name without an IPv6 literal's brackets, worked out once rather than per call. */
  private readonly hostname: string;
  /** TLS connections are ready on `secureConnect` (after the handshake), plain ones on `connect`. */
  private readonly readyEvent: 'connect' | 'secureConnect';
  /** The Host header node:http would send (the origin's host, its port only when not the default). */
  private readonly hostHeader: string;
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private closed = false;

  constructor(private readonly origin: URL, private readonly options: UpstreamPoolOptions) {
    this.transport = origin.protocol === 'https:' ? https : http;
    this.hostname = origin.hostname.replace(/^\[|\]$/g, '');
    this.readyEvent = origin.protocol === 'https:' ? 'secureConnect' : 'connect';
    this.hostHeader = origin.host;
    const agentOptions = { keepAlive: true, maxSockets: options.connections, timeout: options.keepAliveTimeout ?? 4000, scheduling: 'lifo' as const };
    this.agent = origin.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /** Sends one request; resolves with the response once its headers arrived (the body is the caller's to read). */
  request(req: UpstreamRequest): Promise<UpstreamResponse> {
    if (this.closed) return Promise.reject(Object.assign(new Error('upstream pool closed'), { code: 'UPSTREAM_CLOSED' }));
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    this.inFlight++;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const out = this.transport.request({
        agent: this.agent,
        protocol: this.origin.protocol,
        hostname: this.hostname,
        port: this.origin.port || undefined,
        path: req.path,
        method: req.method,
        headers: this.rawHeaders(req.headers, req.body),
        signal: req.signal,
      });
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        if (--this.inFlight === 0) this.idle?.();
      };
      // `on`, not `once`: each event comes once per ClientRequest, which is dropped after the call,
      // and `once` allocates a wrapper and its state per listener (five a call).
      out.on('socket', (socket: Socket) => {
        // A reused keep-alive socket is connected already; a new one gets the connect deadline,
        // which covers the TLS handshake too: a TLS peer that accepts TCP and never answers the
        // handshake is as dead as one that never accepts.
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => out.destroy(Object.assign(new Error('connect timed out'), { code: CONNECT_TIMEOUT })), this.options.connectTimeout);
        socket.once(this.readyEvent, () => clearTimeout(connectTimer));
      });
      let answered = false;
      out.on('response', (res: IncomingMessage) => {
        answered = true;
        clearTimeout(connectTimer);
        // The call is in flight until its body has been read or dropped.
        res.on('close', done);
        // Headers read eagerly: a lazy getter here would capture this closure's context (the
        // ClientRequest with it) for as long as the reply is held; measured, 7.9 % of each
        // young-generation collection survived instead of 1.3 %.
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      out.on('error', (err) => {
        done();
        reject(err);
      });
      out.on('close', () => {
        // Closed before any response and without an error event: report it as a reset.
        if (!settled && !answered) {
          done();
          reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
        }
      });
      const body = req.body;
      if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) out.end(body);
      else body.pipe(out);
    });
  }

  /**
   * The headers as node:http's flat name, value list, Host first. Given a list, ClientRequest
   * writes the header block at once (still validating every name and value) instead of a
   * `setHeader` per header into a table it reads back (less garbage per call). The block
   * is then written before `end()`, so a whole body's Content-Length is set here, as `end()` would.
   */
  private rawHeaders(headers: Record<string, string> | undefined, body: UpstreamRequest['body']): string[] {
    const raw = ['host', this.hostHeader];
    let length = false;
    if (headers) {
      for (const name in headers) {
        const lower = name.toLowerCase();
        if (lower === 'host') continue;
        if (lower === 'content-length') length = true;
        raw.push(name, headers[name]!);
      }
    }
    if (!length && (typeof body === 'string' || Buffer.isBuffer(body))) raw.push('content-length', String(Buffer.byteLength(body)));
    return raw;
  }

  /** Waits for the calls in flight to finish, then closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    this.agent.destroy();
  }

  /** Closes every connection now; calls in flight fail. */
  async destroy(): Promise<void> {
    this.closed = true;
    this.agent.destroy();
  }
}
