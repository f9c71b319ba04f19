import type { IncomingMessage, ServerResponse } from 'node:http';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route handler gets: the raw request and response plus what the kernel already decided. */
export interface RouteContext {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  /**
   * The client's IP address: the socket's peer, or what a trusted proxy forwarded
   * (`server.trustedProxies`, kernel/http/client-address.ts).
   */
  readonly clientAddress: string;
  /** The client reached svc over HTTPS: a TLS socket, or a trusted proxy saying so. */
  readonly secure: boolean;
  /**
   * Aborted when the client goes away. Made when first asked for: an AbortController, its signal
   * and a listener entry on every request cost ~1 KB for a departure that rarely comes; the request
   * path uses `clientGone` and `onClientGone` instead.
   */
  readonly signal: AbortSignal;
  /** The client went away before its response finished. */
  readonly clientGone: boolean;
  /** Called once when the client goes away (one slot: the dispatch phase sets it while its upstream call runs). */
  onClientGone: (() => void) | undefined;
  /**
   * Reads the body as JSON within the service's body limit, or a smaller `maxBytes` (413
   * request_too_large above it). Check the caller before calling it where you can.
   */
  readJson(maxBytes?: number): Promise<unknown>;
  /** Reads the raw body within the same limits, for a route that parses it itself (off the event loop). */
  readBody(maxBytes?: number): Promise<Buffer>;
  /** Writes a JSON response with x-svc-request-id. */
  json(status: number, body: unknown, headers?: Record<string, string>): void;
}

/** How a route is served. */
export interface RouteOptions {
  /**
   * Plain HTTP/1.1 requests to it are read by the front's own reader rather than node:http
   * (kernel/http/direct/; only for paths without parameters). The handler's `req` and `res` then
   * have the part of IncomingMessage and ServerResponse the model API uses (direct/request.ts,
   * direct/response.ts): keep to it.
   */
  direct?: boolean;
}

/**
 * A route's handler. Throw a GatewayError to answer with the spec's error shape.
 *
 * @example
 * ctx.route('GET', '/hello', (rc) => rc.json(200, { hello: 'world' }));
 */
export type RouteHandler = (rc: RouteContext) => void | Promise<void>;
