import { GatewayError, RequestAbort, sumUsage, type RequestContext } from '../../kernel/index.js';
import { attempt, type AttemptEnv } from './attempts.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'upstream.malformed_event': { request_id: string; provider: string };
    /** The body worker stopped with requests waiting on it (they get 500 internal_error). */
    'chat.body_worker_failed': { reason: string; waiting: number };
  }
}

export { replyHeaders } from './headers.js';
export type DispatchDeps = AttemptEnv;

export function blankOutcome(): import('../../kernel/index.js').Outcome {
  return { status: 0, errorCode: null, usage: null, sent: false, firstTokenMs: null, clientClosed: false };
}

/**
 * The dispatch phase: the attempt loop (attempts.ts) under one abort signal that the client
 * leaving, the end of the shutdown grace, and a mid-request stop (`ctx.stop`) all pull. Before
 * the first chunk a stop answers with its reason and nothing more goes upstream; after it the
 * stream ends with a final error event carrying the reason's code (replies.ts).
 */
export async function dispatch(ctx: RequestContext, deps: DispatchDeps): Promise<void> {
  const outcome = (ctx.state.outcome = blankOutcome());
  // Not an AbortController: an EventTarget and its listener bookkeeping on every request (http.ts SignalLine).
  const upstream = new RequestAbort();
  const onClientGone = (): void => {
    outcome.clientClosed = true;
    upstream.abort(new GatewayError('internal_error', 'The client closed the connection.'));
  };
  const onExpired = (): void => upstream.abort(new GatewayError('server_shutting_down', 'The service is restarting.'));
  ctx.onClientGone = onClientGone;
  const expirySlot = deps.lifecycle.expiry.add(onExpired);
  ctx.onStop = (reason) => upstream.abort(reason);
  if (ctx.clientGone) onClientGone();
  else if (ctx.stopReason) upstream.abort(ctx.stopReason);
  else if (deps.lifecycle.expired.aborted) onExpired();
  try {
    await attempt(ctx, deps, upstream);
  } catch (err) {
    if (ctx.stopReason && !ctx.res.headersSent) throw ctx.stopReason;
    if (deps.lifecycle.expired.aborted && !ctx.res.headersSent && !ctx.clientGone) return refuseShuttingDown(ctx);
    throw err;
  } finally {
    // What each model call produced was added as it ended (metered.ts): the record's token counts.
    outcome.usage = sumUsage(outcome.modelCalls ?? []);
    ctx.onClientGone = undefined;
    deps.lifecycle.expiry.remove(expirySlot, onExpired);
    ctx.onStop = undefined;
  }
}

/**
 * A call cut by the end of the shutdown grace before anything reached the client: the same plain
 * 503 (not the error shape) that new requests get while the service drains (SPEC.md Errors).
 */
function refuseShuttingDown(ctx: RequestContext): void {
  const outcome = ctx.state.outcome!;
  outcome.status = 503;
  outcome.errorCode = 'server_shutting_down';
  ctx.res.writeHead(503, { ...ctx.headers, 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  ctx.res.end('Service Unavailable: shutting down\n');
}
