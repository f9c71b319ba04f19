import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestState } from '../contracts/request-state.js';
import type { RouteContext } from '../http/route.js';

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
  /** Aborted when the client goes away or the service stops the request. */
  readonly signal: AbortSignal;
  /** Response headers that any phase may add; written with the response, refusals included. */
  readonly headers: Record<string, string>;
  body: unknown;
  state: RequestState;
  /** Start and end of each phase that ran, in ms since `startedAt` (spans are made from these). */
  readonly phases?: Array<{ phase: string; start: number; end: number }>;
}

/**
 * A fresh context for a request a route runs through the pipeline.
 *
 * @example
 * const rctx = newRequestContext(rc);
 * await pipeline.run(rctx, 'receive', 'receive');
 */
export function newRequestContext(rc: RouteContext): RequestContext {
  return {
    id: rc.id,
    receivedAt: new Date(),
    startedAt: performance.now(),
    req: rc.req,
    res: rc.res,
    signal: rc.signal,
    headers: {},
    body: undefined,
    state: { candidates: [] },
    phases: [],
  };
}
