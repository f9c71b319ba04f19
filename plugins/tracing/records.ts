import { phaseNames, randomId, type PhaseName, requestChargeMicroUsd, type AttemptRecord, type RequestContext, type ToolCallSpan } from '../../kernel/index.js';

export const usageColumns = [
  'id', 'created_at', 'workspace_id', 'person_id', 'key_id', 'provider', 'model', 'prompt_tokens', 'completion_tokens',
  'cached_tokens', 'reasoning_tokens', 'cost_micro_usd', 'status', 'error_code', 'latency_ms', 'ttft_ms', 'stream', 'client_closed',
] as const;

export const spanColumns = ['trace_id', 'span_id', 'parent_span_id', 'name', 'start_us', 'duration_us', 'status', 'attributes'] as const;

/** One usage record of a request: who, which model, tokens, charge, outcome. Never prompt or reply text. */
export function usageRow(ctx: RequestContext, latencyMs: number): Array<string | number | null> {
  const { principal, model, outcome, chat } = ctx.state;
  const usage = outcome?.sent ? outcome.usage : null;
  // Each model call at its own model's prices (a tool loop makes several): what budgets settles.
  const cost = outcome?.sent ? requestChargeMicroUsd(outcome.modelCalls ?? []) : 0;
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
  // One object of a fixed shape, filled and stringified per request (synchronously, so never in
  // use twice at once): JSON.stringify then writes one flat string and nothing else. A fresh
  // object, or text built piece by piece, left 2–4 KB of garbage a request (bench/README.md
  // "Seventeenth look").
  const a = spanAttributes;
  a['svc.workspace_id'] = principal?.workspaceId ?? null;
  a['svc.person_id'] = principal?.personId ?? null;
  a['svc.key_id'] = principal?.keyId ?? null;
  a['svc.model'] = model?.name ?? null;
  a['svc.provider'] = outcome?.sent ? (model?.provider ?? null) : null;
  a['svc.routing_rule'] = selection?.rule ?? null;
  a['svc.route'] = selection?.route ?? null;
  a['svc.routing_reason'] = selection?.reason ?? null;
  a['svc.routing_confidence'] = selection?.confidence ?? null;
  a['svc.prompt_tokens'] = usage[7] ?? null;
  a['svc.completion_tokens'] = usage[8] ?? null;
  a['svc.cost_micro_usd'] = usage[11] ?? null;
  a['svc.status'] = usage[12] ?? null;
  a['svc.error_code'] = outcome?.errorCode ?? null;
  a['svc.ttft_ms'] = outcome?.firstTokenMs ?? null;
  a['svc.attempts'] = outcome?.attempts?.length ?? 0;
  a['svc.tool_calls'] = ctx.state.toolCalls?.length ?? 0;
  a['svc.malformed_events'] = outcome?.malformedEvents ?? 0;
  a['svc.overrun_tokens'] = outcome?.overrunTokens ?? 0;
  fillPhases(ctx);
  const json = JSON.stringify(a);
  return [ctx.id, randomId(8, 'hex'), null, 'chat.completions', ctx.receivedAt.getTime() * 1000, Math.round(latencyMs * 1000), outcome?.errorCode ? 'error' : 'ok', json];
}

/**
 * `svc.phases_us`: phase name → [start µs since the request began, duration µs], for the phases
 * that ran. Every phase has its key and its own two-number array, in phase order; a phase that
 * did not run is undefined, which JSON.stringify leaves out.
 */
const phaseTimes: Record<string, [number, number] | undefined> = Object.fromEntries(phaseNames.map((p) => [p, undefined]));
const phaseSlots = new Map(phaseNames.map((p) => [p, [0, 0] as [number, number]]));

function fillPhases(ctx: RequestContext): void {
  for (const p of phaseNames) phaseTimes[p] = undefined;
  ctx.phases?.forEach(recordPhase);
}

/** Module-level, so no closure is made per request. */
function recordPhase(phase: PhaseName, start: number, end: number): void {
  const slot = phaseSlots.get(phase)!;
  slot[0] = Math.round(start * 1000);
  slot[1] = Math.round((end - start) * 1000);
  phaseTimes[phase] = slot;
}

/** The request span's attributes, in the order they are written (filled by spanRow). */
const spanAttributes: Record<string, string | number | null | typeof phaseTimes> = {
  'svc.workspace_id': null,
  'svc.person_id': null,
  'svc.key_id': null,
  'svc.model': null,
  'svc.provider': null,
  'svc.routing_rule': null,
  'svc.route': null,
  'svc.routing_reason': null,
  'svc.routing_confidence': null,
  'svc.prompt_tokens': null,
  'svc.completion_tokens': null,
  'svc.cost_micro_usd': null,
  'svc.status': null,
  'svc.error_code': null,
  'svc.ttft_ms': null,
  'svc.attempts': 0,
  'svc.tool_calls': 0,
  'svc.malformed_events': 0,
  'svc.overrun_tokens': 0,
  'svc.phases_us': phaseTimes,
};

/** An upstream model call's span attributes (stored and exported alike). */
export function attemptAttributes(a: AttemptRecord): Record<string, string | boolean> {
  return { 'svc.model': a.model, 'svc.provider': a.provider, 'svc.retry': a.retry, 'svc.outcome': a.outcome };
}

/**
 * A workspace tool call's span attributes (stored and exported alike): the OpenTelemetry GenAI
 * `execute_tool` ones and svc's ids, outcome and the arguments' size. Never the arguments or the
 * result (the tools plugin never hands them over).
 */
export function toolCallAttributes(t: ToolCallSpan): Record<string, string | number> {
  const a: Record<string, string | number> = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': t.tool,
    'gen_ai.tool.type': 'function',
    'svc.tool_server_id': t.serverId,
    'svc.tool': t.tool,
    'svc.function_name': t.functionName,
    'svc.outcome': t.outcome,
    'svc.arguments_bytes': t.argumentsBytes,
  };
  if (t.recordId) a['svc.tool_call_id'] = t.recordId;
  if (t.approvalId) a['svc.approval_id'] = t.approvalId;
  return a;
}

/** A child span's row (start and end in ms since the request began). */
function childRow(traceId: string, parent: string, startUs: number, name: string, start: number, end: number, ok: boolean, attributes: object): Array<string | number | null> {
  return [traceId, randomId(8, 'hex'), parent, name, startUs + Math.round(start * 1000), Math.round((Math.max(end, start) - start) * 1000), ok ? 'ok' : 'error', JSON.stringify(attributes)];
}

/**
 * The request's span rows: `span` first, then its children (parent: `span`): one
 * `upstream.attempt` per upstream model call (a tool loop makes several) and one `tool.call` per
 * workspace tool call, each with its own start and duration. One array, no copies.
 */
export function spanRows(ctx: RequestContext, span: Array<string | number | null>): Array<Array<string | number | null>> {
  const attempts = ctx.state.outcome?.attempts ?? [];
  const tools = ctx.state.toolCalls ?? [];
  // Made at its length (a list grown by push gets room for sixteen).
  const rows = new Array<Array<string | number | null>>(1 + attempts.length + tools.length);
  rows[0] = span;
  const parent = span[1] as string;
  const startUs = ctx.receivedAt.getTime() * 1000;
  let at = 1;
  for (const a of attempts) rows[at++] = childRow(ctx.id, parent, startUs, 'upstream.attempt', a.start, a.end || a.start, a.outcome === 'ok', attemptAttributes(a));
  for (const t of tools) rows[at++] = childRow(ctx.id, parent, startUs, 'tool.call', t.start, t.end, t.outcome !== 'error', toolCallAttributes(t));
  return rows;
}
