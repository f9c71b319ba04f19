import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestState } from '../contracts/request-state.js';

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
