import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyReader } from './body.js';
import { parseJson } from './body.js';
import type { ProxyTrust } from './client-address.js';
import { sendJson } from './render.js';
import type { RouteContext } from './route.js';

/**
 * A route's context as a class, not an object literal. Why it matters: an object literal with
 * getters gets a fresh hidden class (map) per evaluation, because each getter is a new closure;
 * maps live in the old generation, so every request's map pointed from the old generation at the
 * request's young objects, and each scavenge kept them (a quarter of all the request path
 * allocated was copied and promoted, and scavenges took 10-40 ms instead of under one;
 * bench/README.md "Fourth pass"). Getters on a prototype are shared; fields hold the rest.
 */
export class HttpRouteContext implements RouteContext {
  private parsedQuery: URLSearchParams | undefined;
  private controller: AbortController | undefined = undefined;
  clientGone = false;
  onClientGone: (() => void) | undefined = undefined;

  constructor(
    readonly id: string,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly params: Record<string, string>,
    private readonly bodies: BodyReader,
    private readonly proxies: ProxyTrust,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.clientGone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The front saw the response close before it finished: the client went away. */
  left(): void {
    if (this.clientGone) return;
    this.clientGone = true;
    this.onClientGone?.();
    this.controller?.abort();
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URL(this.req.url ?? '/', 'http://local').searchParams);
  }

  get clientAddress(): string {
    return this.proxies.clientAddress(this.req);
  }

  get secure(): boolean {
    return this.proxies.secure(this.req);
  }

  async readJson(maxBytes?: number): Promise<unknown> {
    return parseJson(await this.bodies.read(this.req, this.res, maxBytes));
  }

  readBody(maxBytes?: number): Promise<Buffer> {
    return this.bodies.read(this.req, this.res, maxBytes);
  }

  json(status: number, body: unknown, headers?: Record<string, string>): void {
    sendJson(this.res, status, body, headers);
  }
}
