import type { RequestContext } from '../../kernel/index.js';

export type OtlpValue = string | number | boolean | string[];

/**
 * A request's span attributes for trace export: the OpenTelemetry GenAI semantic conventions plus
 * svc's own (ids, route, rule, cost and hold in micro-USD, timings, outcome). Built from the same
 * usage row the app stores; never prompt, reply or tool-argument text, and no provider address.
 */
export function otlpAttributes(rc: RequestContext, latencyMs: number, usage: Array<string | number | null>): Record<string, OtlpValue> {
  const { principal, model, outcome, selection, chat, hold, fallbackFrom } = rc.state;
  const a: Record<string, OtlpValue | null | undefined> = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': model?.provider,
    'gen_ai.request.model': chat?.model,
    'gen_ai.response.model': outcome?.sent ? (outcome.responseModel ?? model?.name) : undefined,
    'gen_ai.usage.input_tokens': usage[7] as number,
    'gen_ai.usage.output_tokens': usage[8] as number,
    'gen_ai.response.finish_reasons': outcome?.finishReasons?.filter(Boolean),
    'gen_ai.conversation.id': headerOf(rc, 'x-svc-conversation'),
    'gen_ai.request.max_tokens': chat?.maxTokens,
    'error.type': outcome?.errorCode ?? undefined,
    'svc.request_id': rc.id,
    'svc.workspace_id': principal?.workspaceId,
    'svc.person_id': principal?.personId,
    'svc.key_id': principal?.keyId ?? undefined,
    'svc.model': model?.name,
    'svc.route': selection?.route,
    'svc.routing_rule': selection?.rule,
    'svc.routing_reason': selection?.reason,
    'svc.routing_confidence': selection?.confidence,
    'svc.fallback_from': fallbackFrom?.model,
    'svc.fallback_scope': fallbackFrom?.scope,
    'svc.cost_micro_usd': usage[11] as number,
    'svc.hold_micro_usd': hold?.amountMicroUsd,
    'svc.cached_tokens': usage[9] as number,
    'svc.reasoning_tokens': usage[10] as number,
    'svc.status': usage[12] as number,
    'svc.outcome': outcomeOf(rc),
    'svc.error_code': outcome?.errorCode ?? undefined,
    'svc.latency_ms': Math.round(latencyMs),
    'svc.ttft_ms': outcome?.firstTokenMs ?? undefined,
    'svc.stream': Boolean(chat?.stream),
    'svc.client_closed': Boolean(outcome?.clientClosed),
  };
  rc.phases?.forEach((phase, start, end) => {
    a[`svc.phase.${phase}.start_us`] = Math.round(start * 1000);
    a[`svc.phase.${phase}.duration_us`] = Math.round((end - start) * 1000);
  });
  const out: Record<string, OtlpValue> = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  return out;
}

function outcomeOf(rc: RequestContext): string {
  const o = rc.state.outcome;
  if (o?.clientClosed) return 'client_closed';
  if (o?.errorCode) return o.sent ? 'failed_upstream' : 'refused';
  return 'ok';
}

/** A conversation id is an id, never text; anything longer than an id is left out. */
function headerOf(rc: RequestContext, name: string): string | undefined {
  const v = rc.req.headers[name];
  return typeof v === 'string' && /^[A-Za-z0-9_-]{1,80}$/.test(v) ? v : undefined;
}
