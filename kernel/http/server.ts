import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { App, type Request, type Response } from '@tinyhttp/app';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { describeFailure } from '../errors/failure.js';
import { BodyReader } from './body.js';
import { renderError } from './render.js';
import { Cors } from './cors.js';
import { answerClientError } from './client-error.js';
import { newRequestId } from './ids.js';
import { ProxyTrust } from './client-address.js';
import { FrontResponse } from './response.js';
import { requestIdOf, tagRequest } from './request-id.js';
import { HttpRouteContext } from './route-context.js';
import type { HttpMethod, RouteHandler, RouteOptions } from './route.js';
import { DirectLane } from './direct/connection.js';
import type { Socket } from 'node:net';
import type { Logger } from '../log/logger.js';
import type { KernelConfig } from '../config/schema.js';

export { newRequestId } from './ids.js';

export { requestIdOf } from './request-id.js';

/** How long a client may go on sending a body that was answered before it was read. */
const discardGraceMs = 10_000;

/**
 * After any answer given before the body was read (401 before reading, 413, …), reads and drops
 * the rest rather than closing at once: closing a socket with unread data resets it, and the
 * client then loses the answer it has not read yet. Nothing is buffered; a client still sending
 * after the grace is cut off. An answer that says `connection: close` closes at once.
 */
function discardRest(this: ServerResponse): void {
  const req = this.req;
  if (req.complete) return;
  if (this.getHeader('connection') === 'close') return void req.socket.destroy();
  const cut = setTimeout(() => req.socket.destroy(), discardGraceMs).unref();
  const stop = (): void => clearTimeout(cut);
  req.once('end', stop).once('close', stop);
  req.resume();
}

/** Set on a response by `route`: its route context, told when the client leaves before the reply finished. */
const clientGone = Symbol('svc.clientGone');
type Watched = ServerResponse & { [clientGone]?: HttpRouteContext };

/** Whether the path (before `?`) is valid percent-encoding of UTF-8, as tinyhttp decodes path parameters. */
function decodablePath(url: string, q: number): boolean {
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The answer to a path that is not valid percent-encoding: the spec's error shape. */
function badPercentEncoding(this: Response): Response {
  renderError(this, new GatewayError('invalid_request', 'The request path is not valid percent-encoding.'));
  return this;
}

type ExactRoute = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
/** The params of a route without any (one shared object, not one per request). */
const noParams: Record<string, string> = Object.freeze({});

/**
 * The HTTP front: a node server whose outer handler gives every request an id (answered as
 * x-svc-request-id, refusals included), counts requests in flight, and answers a plain 503 while
 * the service shuts down; routes live in a tinyhttp app behind it.
 */
export class HttpFront {
  readonly app = new App({
    settings: { xPoweredBy: false },
    noMatchHandler: (req: Request, res: Response) =>
      renderError(res, new GatewayError('not_found', `No route for ${req.method} ${req.path}.`)),
    onError: (err: unknown, req: Request, res: Response) => this.fail(req, res, err),
    // tinyhttp's own extensions (req.get, res.send, … and `fresh`/`stale` defined as getters with
    // new closures) are not used by any route: routes get a RouteContext. Those per-request
    // getters gave every request a hidden class of its own, which kept its objects through
    // scavenges (route-context.ts). The one helper tinyhttp itself calls, on a path parameter
    // that is not valid percent-encoding, is res.sendStatus(400): `handle` refuses such paths
    // first, this stays for any other path tinyhttp cannot decode.
    applyExtensions: (_req: Request, res: Response, next?: () => void) => {
      res.sendStatus = badPercentEncoding;
      next?.();
    },
  });
  readonly server: Server;
  /** Routes without parameters by method, then path: found without building a key per request. */
  private readonly exact = new Map<string, Map<string, ExactRoute>>();
  /** The paths, by method, of the routes the front's own reader takes (RouteOptions.direct). */
  private readonly directRoutes = new Map<string, Set<string>>();
  private readonly direct: DirectLane | undefined;
  private inFlight = 0;
  private draining = false;
  private idleWaiters: Array<() => void> = [];
  private readonly cors: Cors;
  readonly bodies: BodyReader;
  readonly proxies: ProxyTrust;

  constructor(
    config: KernelConfig['server'],
    private readonly log: Logger,
  ) {
    this.bodies = new BodyReader({
      maxBytes: config.bodyLimitBytes,
      inFlightBytes: config.bodyBytesInFlight,
      minBytesPerSecond: config.bodyMinBytesPerSecond,
      rateWindowMs: config.bodyRateWindowMs,
    });
    this.cors = new Cors(config.corsOrigins);
    this.proxies = new ProxyTrust(config.trustedProxies);
    // A whole request (32 MB at most) must arrive within 5 minutes; replies (streams) are not limited.
    // The same limits for node:http and the front's own reader (direct/connection.ts). node:http
    // asks for the head's own limit to be within the whole request's.
    this.server = createServer(
      { keepAliveTimeout: config.keepAliveTimeoutMs, requestTimeout: config.requestTimeoutMs, headersTimeout: Math.min(60_000, config.requestTimeoutMs), ServerResponse: FrontResponse },
      (req, res) => this.handle(req, res),
    );
    this.server.on('clientError', (err, socket) => answerClientError(err, socket, log));
    this.direct = config.directHttp ? this.directLane(config.keepAliveTimeoutMs, config.requestTimeoutMs) : undefined;
    // Node would send 100 Continue before any route ran; the body reader sends it when it starts.
    this.server.on('checkContinue', (req, res) => this.handle(req, res));
  }

  /**
   * Connections start on the front's own reader (direct/connection.ts), which takes node:http's
   * place as the server's connection listener and hands it every connection it does not keep.
   */
  private directLane(keepAliveMs: number, requestTimeoutMs: number): DirectLane | undefined {
    const listeners = this.server.listeners('connection');
    // node:http's own listener, added by its constructor; anything else and node:http keeps all.
    if (listeners.length !== 1) return undefined;
    const nodeHttp = listeners[0] as (socket: Socket) => void;
    const lane = new DirectLane({
      keepAliveMs,
      requestTimeoutMs,
      takes: (method, path) => this.directRoutes.get(method)?.has(path) === true,
      serve: (req, res) => this.handle(req as unknown as IncomingMessage, res as unknown as ServerResponse),
      handOff: (socket) => nodeHttp.call(this.server, socket),
      timedOut: (socket) => answerClientError(Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket, this.log),
    });
    this.server.removeListener('connection', nodeHttp);
    this.server.on('connection', (socket: Socket) => lane.accept(socket));
    return lane;
  }

  /** A response's end: the client gone before it finished aborts its route's signal; the count in flight drops. */
  private readonly responseClosed = ((front: HttpFront) =>
    function (this: Watched): void {
      if (!this.writableFinished) this[clientGone]?.left();
      front.inFlight--;
      if (front.inFlight === 0) for (const wake of front.idleWaiters.splice(0)) wake();
    })(this);

  /** Requests read by the front's own reader since start (0 when it is off). */
  get directServed(): number {
    return this.direct?.served ?? 0;
  }

  get active(): number {
    return this.inFlight;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // Answered with the head, whichever way it is written (response.ts).
    tagRequest(req, newRequestId());
    if (this.cors.apply(req, res)) return;
    if (this.draining) {
      // SPEC.md Errors: while shutting down a new request gets a plain 503, not the error shape.
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end('Service Unavailable: shutting down\n');
      return;
    }
    this.inFlight++;
    // Shared functions called with the response as `this`, on `on` (each fires once per
    // response): `once` with closures allocated a wrapper and two closures per request.
    res.on('finish', discardRest);
    res.on('close', this.responseClosed);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const exact = this.exact.get(req.method ?? '')?.get(q === -1 ? url : url.slice(0, q));
    if (exact) void exact(req, res);
    // Checked here rather than left to tinyhttp, which would also print the URIError's stack on
    // stderr for every such request.
    else if (!decodablePath(url, q)) badPercentEncoding.call(res as Response);
    else this.app.handler(req as Request, res as Response);
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    const gerr = toGatewayError(err);
    if (gerr.status >= 500 || gerr.code === 'request_too_large') {
      this.log.warn('request.failed', { request_id: requestIdOf(req), status: gerr.status, code: gerr.code, ...(gerr.status >= 500 ? describeFailure(err) : {}) });
    }
    renderError(res, gerr);
  }

  /** Adds a route whose handler gets a RouteContext; anything it throws is rendered as an error. */
  route(method: HttpMethod, path: string, handler: RouteHandler, options: RouteOptions = {}): void {
    const run = async (req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Promise<void> => {
      const rc = new HttpRouteContext(requestIdOf(req), req, res, params, this.bodies, this.proxies);
      (res as Watched)[clientGone] = rc;
      try {
        await handler(rc);
      } catch (err) {
        this.fail(req, res, err);
      }
    };
    // Paths without parameters (the model API among them) are found in one map lookup before
    // the router; the rest go through tinyhttp.
    if (!/[:*]/.test(path)) {
      const byPath = this.exact.get(method) ?? new Map<string, ExactRoute>();
      this.exact.set(method, byPath.set(path, (req, res) => run(req, res, noParams)));
      if (options.direct) this.directRoutes.set(method, (this.directRoutes.get(method) ?? new Set<string>()).add(path));
      return;
    }
    const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    this.app[verb](path, (req: Request, res: Response) => run(req, res, (req.params ?? {}) as Record<string, string>));
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolveListen, reject) => {
      this.server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, port, host)));
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolveListen(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /**
   * Starts the drain: the port stays open so that every new request, on a new connection or an
   * open one, gets the spec's plain 503 (load balancers see it too) until `closeAll()`.
   */
  drain(): void {
    this.draining = true;
    this.server.closeIdleConnections();
    this.direct?.closeIdle();
  }

  /** Resolves when nothing is in flight, or after `ms`; true when idle. */
  waitIdle(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((done) => {
      const timer = setTimeout(() => done(this.inFlight === 0), ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        done(true);
      });
    });
  }

  /** Stops listening and drops every connection. */
  closeAll(): void {
    this.server.close();
    this.server.closeAllConnections();
    this.direct?.closeAll();
  }
}

/** A listen failure an operator can act on: a busy or forbidden port names SVC_PORT / SVC_HOST. */
function listenError(err: NodeJS.ErrnoException, port: number, host: string): Error {
  if (err.code === 'EADDRINUSE') return new Error(`port ${port} on ${host} is already in use (listen EADDRINUSE): stop the other process or set SVC_PORT to a free port, e.g. SVC_PORT=8081`);
  if (err.code === 'EACCES') return new Error(`port ${port} on ${host} needs privileges this process lacks (listen EACCES): set SVC_PORT to a port above 1023`);
  if (err.code === 'EADDRNOTAVAIL') return new Error(`address ${host} is not on this machine (listen EADDRNOTAVAIL): set SVC_HOST to one of its addresses, or 0.0.0.0`);
  return err;
}
