import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PhaseTimes } from '../../kernel/pipeline/phase-times.js';
import type { RequestContext } from '../../kernel/index.js';
import { spanRow, usageRow } from '../../plugins/tracing/records.js';

/**
 * The request span's attributes are written as JSON text member by member (records.ts): the
 * text must be exactly what JSON.stringify writes for the object it describes, escaping included.
 */
const test = suite('tracing: the request span row');

function context(state: Record<string, unknown>, phases?: PhaseTimes): RequestContext {
  return { id: 'req_1', receivedAt: new Date(1_700_000_000_000), startedAt: 0, state, phases } as unknown as RequestContext;
}

test('attributes equal JSON.stringify of every field, with escapes and nulls', () => {
  const phases = new PhaseTimes();
  phases.record(0, 0.0123, 0.5);
  phases.record(8, 0.5, 3.25);
  const ctx = context({
    principal: { workspaceId: 'ws_"quoted"\\', personId: 'person\n1', keyId: 'key_é' },
    model: { name: 'gpt "4o"', provider: 'open\u0001ai' },
    selection: { rule: 'classified', route: 'code', reason: 'matched', confidence: 0.8125 },
    outcome: { sent: true, status: 200, usage: { prompt_tokens: 11, completion_tokens: 7 }, modelCalls: [], attempts: [{}, {}], firstTokenMs: 12, malformedEvents: 1, overrunTokens: 3 },
    toolCalls: [{}],
  }, phases);
  const row = spanRow(ctx, 4.5, usageRow(ctx, 4.5));
  const expected = {
    'svc.workspace_id': 'ws_"quoted"\\', 'svc.person_id': 'person\n1', 'svc.key_id': 'key_é', 'svc.model': 'gpt "4o"',
    'svc.provider': 'open\u0001ai', 'svc.routing_rule': 'classified', 'svc.route': 'code', 'svc.routing_reason': 'matched',
    'svc.routing_confidence': 0.8125, 'svc.prompt_tokens': 11, 'svc.completion_tokens': 7, 'svc.cost_micro_usd': 0,
    'svc.status': 200, 'svc.error_code': null, 'svc.ttft_ms': 12, 'svc.attempts': 2, 'svc.tool_calls': 1,
    'svc.malformed_events': 1, 'svc.overrun_tokens': 3, 'svc.phases_us': { receive: [12, 488], dispatch: [500, 2750] },
  };
  assert.is(row[7], JSON.stringify(expected));
  assert.equal(row.slice(0, 7).concat(), ['req_1', row[1], null, 'chat.completions', 1_700_000_000_000_000, 4500, 'ok']);
});

test('a refused request: no principal, model or selection; unsent provider is null; no phases', () => {
  const ctx = context({ outcome: { sent: false, status: 401, errorCode: 'invalid_api_key' } });
  const row = spanRow(ctx, 0.25, usageRow(ctx, 0.25));
  const parsed = JSON.parse(String(row[7])) as Record<string, unknown>;
  assert.is(parsed['svc.workspace_id'], null);
  assert.is(parsed['svc.provider'], null);
  assert.is(parsed['svc.routing_confidence'], null);
  assert.is(parsed['svc.status'], 401);
  assert.is(parsed['svc.error_code'], 'invalid_api_key');
  assert.equal(parsed['svc.phases_us'], {});
  assert.is(row[6], 'error');
});

test.run();
