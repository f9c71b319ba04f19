import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestState } from '../contracts/request-state.js';
import type { RouteContext } from '../http/route.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { DurableWrite } from '../store/group-commit.js';
import { PhaseTimes } from './phase-times.js';

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
  /** Aborted when the client goes away (the route's signal, made when first asked for: RouteContext.signal). */
  readonly signal: AbortSignal;
  /** The client went away before its response finished. */
  readonly clientGone: boolean;
  /** Called once when the client goes away; dispatch sets it while its upstream call runs (see RouteContext). */
  onClientGone: (() => void) | undefined;
  /**
   * Set when the service itself ends a running request (its access was revoked, …): the
   * GatewayError to end it with. Dispatch stops the upstream call and ends the reply with that
   * error: a JSON error before the first chunk, a final error event after it.
   */
  readonly stopReason: GatewayError | undefined;
  /**
   * Called once by `stop` with its reason; dispatch sets it while its upstream call runs. A field
   * rather than an AbortSignal: a controller, its signal and a listener entry per request were
   * allocated for a stop that almost never comes (bench/README.md "Seventeenth look").
   */
  onStop: ((reason: GatewayError) => void) | undefined;
  /**
   * Ends a running request with `reason` (see `stopReason`). The first reason wins.
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
  readonly phases?: PhaseTimes;
  /**
   * Statements settle hooks stage (the usage record, running totals, the settled hold): after the
   * last settle hook the kernel commits them all in ONE transaction, so money survives a crash
   * whole or not at all (kernel/store/group-commit.ts).
   */
  durable?: DurableWrite[];
}

/**
 * Stages `writes` in the request's durable commit (a settle hook; `rc.durable` must be there).
 * The list is replaced by one of its new length rather than grown: an empty list grown by push
 * gets room for sixteen, on every request.
 *
 * @example
 * stageDurable(rc, { kind: 'insert', table: 'usage_records', columns, rows: [row] });
 */
export function stageDurable(rc: RequestContext, ...writes: DurableWrite[]): void {
  const staged = rc.durable!;
  rc.durable = staged.length === 0 ? writes : staged.concat(writes);
}

/**
 * A fresh context for a request a route runs through the pipeline.
 *
 * @example
 * const rctx = newRequestContext(rc);
 * await pipeline.run(rctx, 'receive', 'receive');
 */
export function newRequestContext(rc: RouteContext): RequestContext {
  return new PipelineContext(rc);
}

/**
 * A class, not an object literal with a getter: a literal's getter closure gives every request a
 * hidden class of its own, held by the old generation, which kept each request's objects through
 * scavenges (kernel/http/route-context.ts says more).
 */
class PipelineContext implements RequestContext {
  readonly id: string;
  readonly receivedAt = new Date();
  readonly startedAt = performance.now();
  readonly req: RouteContext['req'];
  readonly res: RouteContext['res'];
  stopReason: GatewayError | undefined = undefined;
  onStop: ((reason: GatewayError) => void) | undefined = undefined;
  readonly headers: Record<string, string> = {};
  body: unknown = undefined;
  state: RequestState = new PipelineState();
  readonly phases = new PhaseTimes();
  durable: DurableWrite[] = [];

  constructor(private readonly route: RouteContext) {
    this.id = route.id;
    this.req = route.req;
    this.res = route.res;
  }

  get signal(): AbortSignal {
    return this.route.signal;
  }

  get clientGone(): boolean {
    return this.route.clientGone;
  }

  get onClientGone(): (() => void) | undefined {
    return this.route.onClientGone;
  }

  set onClientGone(fn: (() => void) | undefined) {
    this.route.onClientGone = fn;
  }

  get clientAddress(): string {
    return this.route.clientAddress;
  }

  stop(reason: GatewayError): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.onStop?.(reason);
  }
}

/**
 * Every field of RequestState from the start, in one shape: fields added phase by phase (some
 * fifteen) grew the object's property store several times per request, a copy each time, and
 * gave the state a chain of hidden classes that every reader had to tell apart.
 */
class PipelineState implements RequestState {
  principal: RequestState['principal'] = undefined;
  chat: RequestState['chat'] = undefined;
  runningSlot: RequestState['runningSlot'] = undefined;
  needs: RequestState['needs'] = undefined;
  selection: RequestState['selection'] = undefined;
  candidates: RequestState['candidates'] = [];
  model: RequestState['model'] = undefined;
  hold: RequestState['hold'] = undefined;
  fallbackFrom: RequestState['fallbackFrom'] = undefined;
  reservations: RequestState['reservations'] = undefined;
  outcome: RequestState['outcome'] = undefined;
  recordReply: RequestState['recordReply'] = undefined;
  reply: RequestState['reply'] = undefined;
  conversation: RequestState['conversation'] = undefined;
  answersApproval: RequestState['answersApproval'] = undefined;
  toolLoop: RequestState['toolLoop'] = undefined;
  toolCalls: RequestState['toolCalls'] = undefined;
}
