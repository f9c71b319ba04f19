import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestState } from '../contracts/request-state.js';
import type { RouteContext } from '../http/route.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { DurableWrite } from '../store/group-commit.js';

/**
 * One request's context, passed through every phase. A typed object, not a container: phases
 * read and write `state`, and add response headers through `headers`.
 */
export interface RequestContext {
  readonly id: string;
  readonly receivedAt: Date;
  /** performance.now() at receipt, for durations. */
  readonly startedAt: number;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The client's IP address (see RouteContext.clientAddress). */
  readonly clientAddress: string;
  /** Aborted when the client goes away or the service stops the request. */
  readonly signal: AbortSignal;
  /**
   * Aborted when the service itself ends a running request (its access was revoked, …); the
   * reason is the GatewayError to end it with. Dispatch stops the upstream call and ends the reply
   * with that error: a JSON error before the first chunk, a final error event after it.
   */
  readonly stopped: AbortSignal;
  /**
   * Ends a running request with `reason` (see `stopped`). The first reason wins.
   *
   * @example
   * rctx.stop(new GatewayError('access_revoked', 'Access to this workspace was removed during the request.'));
   */
  stop(reason: GatewayError): void;
  /** Response headers that any phase may add; written with the response, refusals included. */
  readonly headers: Record<string, string>;
  /**
   * The body as read: after `authenticate` (hooks of `receive` and `authenticate` see undefined,
   * so an unauthenticated body is never read), and still undefined in `settle` for a request
   * refused before it was read. The model API reads raw bytes (a Buffer) and parses them in its
   * `validate` hook, into `state.chat`.
   */
  body: unknown;
  state: RequestState;
  /** Start and end of each phase that ran, in ms since `startedAt` (spans are made from these). */
  readonly phases?: Array<{ phase: string; start: number; end: number }>;
  /**
   * Statements settle hooks stage (the usage record, running totals, the settled hold): after the
   * last settle hook the kernel commits them all in ONE transaction, so money survives a crash
   * whole or not at all (kernel/store/group-commit.ts).
   */
  durable?: DurableWrite[];
  /** Steps run only once `durable` is committed (budgets moves its cache counters here). */
  afterCommit?: Array<() => Promise<void> | void>;
}

/**
 * A fresh context for a request a route runs through the pipeline.
 *
 * @example
 * const rctx = newRequestContext(rc);
 * await pipeline.run(rctx, 'receive', 'receive');
 */
export function newRequestContext(rc: RouteContext): RequestContext {
  const stopper = new AbortController();
  return {
    stopped: stopper.signal,
    stop: (reason) => {
      if (!stopper.signal.aborted) stopper.abort(reason);
    },
    id: rc.id,
    receivedAt: new Date(),
    startedAt: performance.now(),
    req: rc.req,
    res: rc.res,
    get clientAddress() {
      return rc.clientAddress;
    },
    signal: rc.signal,
    headers: {},
    body: undefined,
    state: { candidates: [] },
    phases: [],
    durable: [],
    afterCommit: [],
  };
}
