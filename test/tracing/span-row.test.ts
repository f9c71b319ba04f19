import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RequestContext } from '../../kernel/index.js';
import { spanRow } from '../../plugins/tracing/records.js';

/** The attributes as an object, in the stored order: what spanRow's text must serialize to exactly. */
function expected(ctx: RequestContext, usage: Array<string | number | null>): Record<string, unknown> {
  const { outcome, model, principal, selection } = ctx.state;
  const phases: Record<string, [number, number]> = {};
  for (const p of ctx.phases ?? []) phases[p.phase] = [Math.round(p.start * 1000), Math.round((p.end - p.start) * 1000)];
  return {
    'svc.workspace_id': principal?.workspaceId ?? null,
    'svc.person_id': principal?.personId ?? null,
    'svc.key_id': principal?.keyId ?? null,
    'svc.model': model?.name ?? null,
    'svc.provider': outcome?.sent ? (model?.provider ?? null) : null,
    'svc.routing_rule': selection?.rule ?? null,
    'svc.route': selection?.route ?? null,
    'svc.routing_reason': selection?.reason ?? null,
    'svc.routing_confidence': selection?.confidence ?? null,
    'svc.prompt_tokens': usage[7],
    'svc.completion_tokens': usage[8],
    'svc.cost_micro_usd': usage[11],
    'svc.status': usage[12],
    'svc.error_code': outcome?.errorCode ?? null,
    'svc.ttft_ms': outcome?.firstTokenMs ?? null,
    'svc.attempts': outcome?.attempts?.length ?? 0,
    'svc.tool_calls': ctx.state.toolCalls?.length ?? 0,
    'svc.malformed_events': outcome?.malformedEvents ?? 0,
    'svc.overrun_tokens': outcome?.overrunTokens ?? 0,
    'svc.phases_us': phases,
  };
}

const base = { id: 'req_1', receivedAt: new Date(1_790_000_000_000) };
const usage = ['req_1', 0, 'w', 'p', 'k', 'mock', 'mock:m', 24, 20, 0, 0, 1234, 200, null, 5, 3, 0, 0];

test('spanRow writes the attributes JSON.stringify would, for a full request and for a refused one', () => {
  const full = {
    ...base,
    phases: [{ phase: 'receive', start: 0.01, end: 0.02 }, { phase: 'authenticate', start: 0.02, end: 0.3456 }, { phase: 'dispatch', start: 0.4, end: 1.9 }],
    state: {
      candidates: [],
      principal: { workspaceId: 'ws_"quoted"', personId: 'p_1', keyId: 'k_ü' },
      model: { name: 'mock:bench-d0', provider: 'mock' },
      selection: { rule: 'classifier', route: 'code\\n', reason: 'confident', confidence: 0.8765 },
      outcome: { sent: true, errorCode: null, firstTokenMs: 3, attempts: [{}, {}], malformedEvents: 1, overrunTokens: 0 },
      toolCalls: [{}],
    },
  } as unknown as RequestContext;
  const refused = { ...base, phases: [], state: { candidates: [], outcome: { sent: false, errorCode: 'budget_exceeded', firstTokenMs: null } } } as unknown as RequestContext;
  const twice = { ...base, phases: [{ phase: 'select', start: 0, end: 1 }, { phase: 'dispatch', start: 1, end: 2 }, { phase: 'select', start: 2, end: 2.5 }], state: { candidates: [] } } as unknown as RequestContext;
  for (const ctx of [full, refused, twice]) {
    const text = spanRow(ctx, 2.5, usage)[7] as string;
    assert.is(text, JSON.stringify(expected(ctx, usage)));
  }
});

test.run();
