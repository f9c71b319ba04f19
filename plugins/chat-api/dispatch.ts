import {
  GatewayError,
  sendJson,
  toGatewayError,
  type CatalogModel,
  type ChatCompletionChunk,
  type ErrorCode,
  type Lifecycle,
  type Outcome,
  type ProviderAdapter,
  type ProviderRegistry,
  type RequestContext,
  type UpstreamCall,
} from '../../kernel/index.js';
import { StreamWriter } from './stream-writer.js';
import { producedUsage } from './usage.js';

/** Failures of one provider that another candidate may not share: worth the next fallback. */
const fallbackCodes = new Set<ErrorCode>([
  'upstream_unavailable',
  'provider_auth_failed',
  'provider_billing',
  'provider_model_not_found',
  'provider_not_configured',
  'stream_interrupted',
]);

export interface DispatchDeps {
  registry: ProviderRegistry;
  lifecycle: Lifecycle;
}

/** The x-svc-* headers of a reply (SPEC.md Response headers). */
export function replyHeaders(ctx: RequestContext, model: CatalogModel): Record<string, string> {
  const h: Record<string, string> = { ...ctx.headers, 'x-svc-model': model.name };
  const sel = ctx.state.selection;
  if (sel) {
    h['x-svc-routing-rule'] = sel.rule;
    if (sel.route) h['x-svc-route'] = sel.route;
    if (sel.reason) h['x-svc-routing-reason'] = sel.reason;
    if (sel.confidence !== undefined) h['x-svc-routing-confidence'] = sel.confidence.toFixed(2);
  }
  if (ctx.state.fallbackFrom) {
    h['x-svc-fallback-from'] = ctx.state.fallbackFrom.model;
    h['x-svc-fallback-scope'] = ctx.state.fallbackFrom.scope;
  }
  return h;
}

export function blankOutcome(): Outcome {
  return { status: 0, errorCode: null, usage: null, sent: false, firstTokenMs: null, clientClosed: false };
}

/**
 * The dispatch phase: calls the chosen model's provider, falling back to the next candidate only
 * before anything reached the client (SPEC.md Streamed reply: "not started"). Writes the reply.
 */
export async function dispatch(ctx: RequestContext, deps: DispatchDeps): Promise<void> {
  const { state } = ctx;
  const outcome = (state.outcome = blankOutcome());
  const first = state.model ?? state.candidates[0]!;
  const chain = [first, ...state.candidates.filter((m) => m !== first)];
  const upstream = new AbortController();
  const onClientGone = (): void => {
    outcome.clientClosed = true;
    upstream.abort();
  };
  ctx.signal.addEventListener('abort', onClientGone, { once: true });
  // At the end of the shutdown grace every call still running is cut, started or not.
  const onExpired = (): void => upstream.abort();
  deps.lifecycle.expired.addEventListener('abort', onExpired, { once: true });
  if (deps.lifecycle.expired.aborted) upstream.abort();
  // Issue 18: the service stopped the request (access revoked): cut the upstream call with its reason.
  const onStopped = (): void => upstream.abort(ctx.stopped.reason);
  ctx.stopped.addEventListener('abort', onStopped, { once: true });
  try {
    for (let i = 0; i < chain.length; i++) {
      if (ctx.stopped.aborted) throw stopReason(ctx); // nothing more goes upstream, between fallbacks too
      const model = chain[i]!;
      const requested = state.chat!.maxTokens;
      if (requested !== undefined && requested > model.outputLimit) continue;
      state.model = model;
      try {
        const adapter = deps.registry.adapter(model.provider, state.principal?.workspaceId);
        const call: UpstreamCall = { model, request: { ...state.chat!, maxTokens: requested ?? model.outputLimit }, signal: upstream.signal };
        if (ctx.signal.aborted) return;
        outcome.sent = true;
        if (state.chat!.stream) await streamReply(ctx, adapter, call, deps.lifecycle);
        else await wholeReply(ctx, adapter, call);
        return;
      } catch (err) {
        if (ctx.stopped.aborted && !ctx.res.headersSent) throw stopReason(ctx);
        if (deps.lifecycle.expired.aborted && !ctx.res.headersSent) return refuseShuttingDown(ctx);
        const g = toGatewayError(err);
        if (ctx.res.headersSent || !fallbackCodes.has(g.code) || i === chain.length - 1 || ctx.signal.aborted) throw g;
      }
    }
    const field = state.chat!.maxTokensField ?? 'max_tokens';
    throw new GatewayError('output_too_long', `${field} is above the output limit of every candidate model.`, { param: field });
  } finally {
    ctx.signal.removeEventListener('abort', onClientGone);
    deps.lifecycle.expired.removeEventListener('abort', onExpired);
    ctx.stopped.removeEventListener('abort', onStopped);
  }
}

/** The GatewayError the service stopped the request with (RequestContext.stopped). */
function stopReason(ctx: RequestContext): GatewayError {
  return toGatewayError(ctx.stopped.reason);
}

/**
 * A call cut by the end of the shutdown grace before anything reached the client: the same plain
 * 503 (not the error shape) that new requests get while the service drains (SPEC.md Errors).
 */
function refuseShuttingDown(ctx: RequestContext): void {
  const outcome = ctx.state.outcome!;
  outcome.status = 503;
  outcome.errorCode = 'server_shutting_down';
  if (ctx.signal.aborted) return;
  ctx.res.writeHead(503, { ...ctx.headers, 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  ctx.res.end('Service Unavailable: shutting down\n');
}

async function wholeReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall): Promise<void> {
  const completion = await adapter.complete(call);
  const outcome = ctx.state.outcome!;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  completion.model = call.model.name;
  outcome.usage = completion.usage ?? producedUsage(call.request.messages, completion.choices[0]?.message.content?.length ?? 0, call.request.maxTokens);
  outcome.status = 200;
  sendJson(ctx.res, 200, completion, replyHeaders(ctx, call.model));
}

/** Characters a chunk adds, for charging a reply that broke off before the provider reported usage. */
function producedBy(chunk: ChatCompletionChunk): number {
  let n = 0;
  for (const c of chunk.choices) {
    n += c.delta.content?.length ?? 0;
    for (const t of c.delta.tool_calls ?? []) n += (t.function?.name?.length ?? 0) + (t.function?.arguments?.length ?? 0);
  }
  return n;
}

async function streamReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall, lifecycle: Lifecycle): Promise<void> {
  const outcome = ctx.state.outcome!;
  const iterator = (await adapter.stream(call))[Symbol.asyncIterator]();
  // Before the first chunk nothing reached the client: an error here is a plain JSON error (or a fallback).
  let next = await iterator.next();
  const writer = new StreamWriter(ctx.res);
  writer.open(replyHeaders(ctx, call.model));
  outcome.status = 200;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  let produced = 0;
  let usage = null;
  try {
    while (!next.done) {
      const chunk = next.value;
      if (chunk.usage) usage = chunk.usage;
      produced += producedBy(chunk);
      chunk.model = call.model.name;
      if (call.request.includeUsage || !chunk.usage) await writer.chunk(chunk);
      else if (chunk.choices.length > 0) {
        delete chunk.usage;
        await writer.chunk(chunk);
      }
      next = await iterator.next();
    }
    writer.done();
  } catch (err) {
    if (ctx.stopped.aborted) {
      const g = stopReason(ctx);
      outcome.errorCode = g.code;
      writer.error(g);
    } else if (lifecycle.expired.aborted) {
      outcome.errorCode = 'server_shutting_down';
      writer.error(new GatewayError('server_shutting_down', 'The service is restarting; the reply was cut short. Retry the request.'));
    } else if (!outcome.clientClosed) {
      const g = toGatewayError(err);
      outcome.errorCode = g.code;
      writer.error(g);
    }
    await iterator.return?.().catch(() => {});
  } finally {
    outcome.usage = usage ?? producedUsage(call.request.messages, produced, call.request.maxTokens);
  }
}
