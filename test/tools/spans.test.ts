import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { OtlpReceiver } from '../tracing/otlp-receiver.js';
import { call, model, startToolsWorld, type ToolsWorld } from './support.js';

/**
 * Workspace tool calls in the request's trace (issue 13 item 5): one `tool.call` span per call,
 * child of the request's span, with server id, tool, function name, outcome, duration and the
 * arguments' size, never the arguments or the result; one `upstream.attempt` span per model call
 * of the loop; read through the admin API's request trace and exported over OTLP.
 */
const test = suite(`tools: tool calls as trace spans (${shape})`);
let w: ToolsWorld;
let receiver: OtlpReceiver;

const argCanary = 'span-argument-canary-51c0de';
const ask = { model, messages: [{ role: 'user' as const, content: 'Use the tools' }] };

test.before(async () => {
  receiver = await new OtlpReceiver().start();
  w = await startToolsWorld({ SVC_OTLP_ENDPOINT: receiver.url });
});
test.after(async () => {
  await w?.stop();
  await receiver?.stop();
});
test.before.each(() => {
  w.mock.reset();
  w.mcp.calls.length = 0;
});

interface Span { span_id: string; parent_span_id: string | null; name: string; offset_us: number; duration_us: number; status: string; attributes: Record<string, any> }

/** The request's trace as the admin API shows it (instance admins and the workspace's admins alike). */
async function trace(requestId: string): Promise<Span[]> {
  await w.svc.service.get(TracingFlushToken)();
  const all = await w.admin.ok<{ spans: Span[] }>('GET', `/requests/${requestId}`);
  const mine = await w.ws<{ spans: Span[] }>('GET', `/requests/${requestId}`);
  assert.equal(mine.body.spans, all.spans);
  return all.spans;
}

const bytes = (args: Record<string, unknown>): number => Buffer.byteLength(JSON.stringify(args));

test('a whole loop: one tool.call span per call with its outcome and sizes, one upstream.attempt per model call; no argument or result text', async () => {
  const conv = await w.conversation();
  const calls = [call('files__lookup', { q: argCanary }, 'c1'), call('files__fail', { q: argCanary }, 'c2'), call('files__echo', { say: `${argCanary}-é` }, 'c3')];
  w.mock.enqueue({ reply: { content: null, tool_calls: calls } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const { response } = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } }).withResponse();
  const requestId = response.headers.get('x-svc-request-id')!;
  const spans = await trace(requestId);
  assert.equal(spans.map((s) => s.name).sort(), ['chat.completions', 'tool.call', 'tool.call', 'tool.call', 'upstream.attempt', 'upstream.attempt']);
  const root = spans.find((s) => s.name === 'chat.completions')!;
  assert.is(root.attributes['svc.attempts'], 2);
  assert.is(root.attributes['svc.tool_calls'], 3);
  const tools = spans.filter((s) => s.name === 'tool.call').sort((a, b) => a.offset_us - b.offset_us);
  const records = await w.calls(requestId);
  assert.equal(tools.map((s) => [s.parent_span_id, s.status, s.attributes]), [
    [root.span_id, 'ok', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.type': 'function', 'svc.tool_server_id': w.serverId, 'svc.tool': 'lookup', 'svc.function_name': 'files__lookup', 'svc.outcome': 'ok', 'svc.arguments_bytes': bytes({ q: argCanary }), 'svc.tool_call_id': records[0].id }],
    [root.span_id, 'error', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'fail', 'gen_ai.tool.type': 'function', 'svc.tool_server_id': w.serverId, 'svc.tool': 'fail', 'svc.function_name': 'files__fail', 'svc.outcome': 'error', 'svc.arguments_bytes': bytes({ q: argCanary }), 'svc.tool_call_id': records[1].id }],
    [root.span_id, 'ok', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo', 'gen_ai.tool.type': 'function', 'svc.tool_server_id': w.serverId, 'svc.tool': 'echo', 'svc.function_name': 'files__echo', 'svc.outcome': 'ok', 'svc.arguments_bytes': bytes({ say: `${argCanary}-é` }), 'svc.tool_call_id': records[2].id }],
  ]);
  // The tools ran between the two model calls, one after the other.
  const [first, second] = spans.filter((s) => s.name === 'upstream.attempt').sort((a, b) => a.offset_us - b.offset_us);
  assert.equal([first!.parent_span_id, second!.parent_span_id, first!.attributes['svc.outcome'], second!.attributes['svc.outcome']], [root.span_id, root.span_id, 'ok', 'ok']);
  let at = first!.offset_us + first!.duration_us;
  for (const t of [...tools, second!]) {
    assert.ok(t.offset_us >= at, `${t.name} starts at ${t.offset_us}, before ${at}`);
    at = t.offset_us + t.duration_us;
  }
  assert.ok(tools.every((t) => t.duration_us > 0 && Number.isInteger(t.duration_us)));
  const text = JSON.stringify(spans);
  for (const s of [argCanary, 'found:', 'echo:', 'server-side failure']) assert.not.ok(text.includes(s), `the trace carries ${s}`);
});

test('streamed, with an approval: the stopped call is a pending span; x-svc-deny adds a refused span to the answering request', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'wren' }, 'l1'), call('files__delete_item', { id: argCanary }, 'd1')] } });
  const { data: stream, response } = await w.client.chat.completions.create({ ...ask, stream: true }, { headers: { 'x-svc-conversation': conv } }).withResponse();
  let approval = '';
  for await (const c of stream) approval = (c as any).svc?.pending_approval?.id ?? approval;
  assert.match(approval, /^apr_/);
  const stopped = await trace(response.headers.get('x-svc-request-id')!);
  const toolSpans = (spans: Span[]) => spans.filter((s) => s.name === 'tool.call').sort((a, b) => a.offset_us - b.offset_us).map((s) => [s.attributes['svc.tool'], s.attributes['svc.outcome'], s.attributes['svc.approval_id'] ?? null]);
  assert.equal(toolSpans(stopped), [['lookup', 'ok', null], ['delete_item', 'pending', approval]]);
  assert.is(stopped.filter((s) => s.name === 'upstream.attempt').length, 1);

  w.mock.enqueue({ reply: { content: 'Not deleted.' } });
  const denied = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-deny': approval } }).withResponse();
  const answered = await trace(denied.response.headers.get('x-svc-request-id')!);
  assert.equal(toolSpans(answered), [['delete_item', 'refused', approval]]);
  const refused = answered.find((s) => s.name === 'tool.call')!;
  assert.is(refused.attributes['svc.arguments_bytes'], bytes({ id: argCanary }));
  // The denial has its own record in the answering request (the stopped request's stays pending).
  const records = await w.calls(denied.response.headers.get('x-svc-request-id')!);
  assert.equal(records.map((r) => [r.id, r.outcome]), [[refused.attributes['svc.tool_call_id'], 'refused']]);
  assert.not.ok(JSON.stringify([stopped, answered]).includes(argCanary));
});

test('OTLP export: the tool calls and model calls are children of the request span, with GenAI execute_tool names; never argument text', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: argCanary }, 'c1'), call('files__fail', { q: argCanary }, 'c2')] } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const { response } = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } }).withResponse();
  const requestId = response.headers.get('x-svc-request-id')!;
  const rootOf = () => receiver.spans.find((s) => s.attributes['svc.request_id'] === requestId);
  for (let i = 0; i < 200 && !rootOf(); i++) await new Promise((done) => setTimeout(done, 50));
  const root = rootOf();
  assert.ok(root, 'the request span arrived');
  const children = receiver.spans.filter((s) => s.parentSpanId === root.spanId);
  assert.ok(children.every((s) => s.traceId === root.traceId));
  assert.equal(children.map((s) => s.name).sort(), ['execute_tool fail', 'execute_tool lookup', 'upstream.attempt', 'upstream.attempt']);
  const lookup = children.find((s) => s.name === 'execute_tool lookup')!;
  const fail = children.find((s) => s.name === 'execute_tool fail')!;
  assert.equal([lookup.kind, lookup.attributes['gen_ai.operation.name'], lookup.attributes['gen_ai.tool.name'], lookup.attributes['svc.outcome'], lookup.attributes['svc.tool_server_id'], lookup.attributes['svc.arguments_bytes']], [
    1, 'execute_tool', 'lookup', 'ok', w.serverId, bytes({ q: argCanary }),
  ]);
  assert.equal([fail.status.code, fail.attributes['svc.outcome'], fail.attributes['error.type']], [2, 'error', 'tool_error']);
  assert.ok(BigInt(lookup.startTimeUnixNano) >= BigInt(root.startTimeUnixNano) && BigInt(lookup.endTimeUnixNano) <= BigInt(root.endTimeUnixNano));
  const raw = receiver.bodies.join('\n');
  for (const s of [argCanary, 'found:', 'server-side failure']) assert.not.ok(raw.includes(s), `exported ${s}`);
});

test.run();
