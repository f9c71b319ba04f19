import { chargeMicroUsd, randomId, type RequestContext } from '../../kernel/index.js';

export const usageColumns = [
  'id', 'created_at', 'workspace_id', 'person_id', 'key_id', 'provider', 'model', 'prompt_tokens', 'completion_tokens',
  'cached_tokens', 'reasoning_tokens', 'cost_micro_usd', 'status', 'error_code', 'latency_ms', 'ttft_ms', 'stream', 'client_closed',
] as const;

export const spanColumns = ['trace_id', 'span_id', 'parent_span_id', 'name', 'start_us', 'duration_us', 'status', 'attributes'] as const;

/** One usage record of a request: who, which model, tokens, charge, outcome. Never prompt or reply text. */
export function usageRow(ctx: RequestContext, latencyMs: number): Array<string | number | null> {
  const { principal, model, outcome, chat } = ctx.state;
  const usage = outcome?.sent ? outcome.usage : null;
  const cost = model && usage ? chargeMicroUsd(model, usage) : 0;
  return [
    ctx.id,
    ctx.receivedAt.getTime(),
    principal?.workspaceId ?? null,
    principal?.personId ?? null,
    principal?.keyId ?? null,
    outcome?.sent ? (model?.provider ?? null) : null,
    model?.name ?? null,
    usage?.prompt_tokens ?? 0,
    usage?.completion_tokens ?? 0,
    usage?.prompt_tokens_details?.cached_tokens ?? 0,
    usage?.completion_tokens_details?.reasoning_tokens ?? 0,
    cost,
    outcome?.clientClosed && outcome.status === 0 ? 499 : (outcome?.status ?? 0),
    outcome?.errorCode ?? null,
    Math.round(latencyMs),
    outcome?.firstTokenMs ?? null,
    chat?.stream ? 1 : 0,
    outcome?.clientClosed ? 1 : 0,
  ];
}

/**
 * The request's span: one row per request whose attributes carry ids, models, token counts,
 * costs, timings (each pipeline phase's start and duration) and the outcome; never prompt or
 * reply text. One row rather than one per phase keeps the write behind each request small.
 */
export function spanRow(ctx: RequestContext, latencyMs: number, usage: Array<string | number | null>): Array<string | number | null> {
  const { outcome, model, principal, selection } = ctx.state;
  const phases: Record<string, [number, number]> = {};
  for (const p of ctx.phases ?? []) phases[p.phase] = [Math.round(p.start * 1000), Math.round((p.end - p.start) * 1000)];
  const attributes = {
    'svc.workspace_id': principal?.workspaceId ?? null,
    'svc.person_id': principal?.personId ?? null,
    'svc.key_id': principal?.keyId ?? null,
    'svc.model': model?.name ?? null,
    'svc.provider': outcome?.sent ? (model?.provider ?? null) : null,
    'svc.routing_rule': selection?.rule ?? null,
    'svc.prompt_tokens': usage[7],
    'svc.completion_tokens': usage[8],
    'svc.cost_micro_usd': usage[11],
    'svc.status': usage[12],
    'svc.error_code': outcome?.errorCode ?? null,
    'svc.ttft_ms': outcome?.firstTokenMs ?? null,
    'svc.attempts': outcome?.attempts?.length ?? 0,
    'svc.malformed_events': outcome?.malformedEvents ?? 0,
    'svc.overrun_tokens': outcome?.overrunTokens ?? 0,
    /** Phase name → [start µs since the request began, duration µs]. */
    'svc.phases_us': phases,
  };
  return [ctx.id, randomId(8, 'hex'), null, 'chat.completions', ctx.receivedAt.getTime() * 1000, Math.round(latencyMs * 1000), outcome?.errorCode ? 'error' : 'ok', JSON.stringify(attributes)];
}

/**
 * One child span per upstream attempt of the request (`parentSpanId` is the request's span): the
 * model, provider, whether it was a retry, and how it ended (`ok` or the error code).
 */
export function attemptRows(ctx: RequestContext, parentSpanId: string): Array<Array<string | number | null>> {
  const startUs = ctx.receivedAt.getTime() * 1000;
  return (ctx.state.outcome?.attempts ?? []).map((a) => {
    const attributes = { 'svc.model': a.model, 'svc.provider': a.provider, 'svc.retry': a.retry, 'svc.outcome': a.outcome };
    const end = a.end || a.start;
    return [ctx.id, randomId(8, 'hex'), parentSpanId, 'upstream.attempt', startUs + Math.round(a.start * 1000), Math.round((end - a.start) * 1000), a.outcome === 'ok' ? 'ok' : 'error', JSON.stringify(attributes)];
  });
}
