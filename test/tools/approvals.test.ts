import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { Admin } from '../support/provision.js';
import { eventually } from '../routing/support.js';
import { call, model, refusal, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

const test = suite(`tools: approvals (${shape})`);
let w: ToolsWorld;

test.before(async () => {
  w = await startToolsWorld();
});
test.after(async () => w?.stop());
test.before.each(() => {
  w.mock.reset();
  w.mcp.calls.length = 0;
});

const ask = { model, messages: [{ role: 'user' as const, content: 'Delete item 42 please' }] };
const del = call('files__delete_item', { id: '42' });

/** A conversation whose last reply waits for approval of `files__delete_item {id: 42}`; its approval id and the request id. */
async function waiting(client = w.client, conv?: string): Promise<{ conv: string; id: string; requestId: string }> {
  conv ??= await w.conversation();
  w.mock.enqueue({ reply: { content: 'I will delete it.', tool_calls: [del] } });
  const { data, response } = await client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } }).withResponse();
  const body = data as any;
  assert.is(response.status, 200);
  assert.match(body.svc.pending_approval.id, /^apr_[A-Za-z0-9_-]{16}$/);
  assert.equal(body.svc.pending_approval, { id: body.svc.pending_approval.id, tool: 'files__delete_item', arguments: { id: '42' } });
  assert.equal(body.choices[0].message, { role: 'assistant', content: 'I will delete it.' });
  assert.is(body.choices[0].finish_reason, 'stop');
  return { conv, id: body.svc.pending_approval.id, requestId: response.headers.get('x-svc-request-id')! };
}

test('a tool that needs approval stops the reply with svc.pending_approval; approve runs it and the loop continues', async () => {
  const { conv, id, requestId } = await waiting();
  assert.equal(w.mcp.calls, [], 'nothing ran before the approval');
  assert.equal((await w.calls(requestId)).map((r) => [r.tool, r.outcome, r.approval_id]), [['delete_item', 'pending', id]]);
  w.mock.enqueue({ reply: { content: 'Item 42 is deleted.' } });
  const { data, response } = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } }).withResponse();
  assert.is(data.choices[0]!.message.content, 'Item 42 is deleted.');
  assert.equal(w.mcp.calls, [{ tool: 'delete_item', args: { id: '42' } }]);
  const sent = upstreamBodies(w.mock)[1];
  assert.equal(sent.messages.slice(-2), [
    { role: 'assistant', content: 'I will delete it.', tool_calls: [del] },
    { role: 'tool', content: 'deleted 42', tool_call_id: del.id },
  ]);
  // The stopped request's record keeps what happened there (pending), with the answer and who gave it.
  const approving = response.headers.get('x-svc-request-id')!;
  assert.equal((await w.calls(requestId)).map((r) => [r.outcome, r.answer, r.answer_request_id]), [['pending', 'approved', approving]]);
  assert.equal((await w.calls(approving)).map((r) => [r.tool, r.outcome, r.approval_id, r.answer]), [['delete_item', 'ok', id, null]]);
  // Answered already: 404 not_found with a message saying so; nothing runs again.
  const again = w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } });
  assert.equal(await refusal(again), [404, 'not_found', 'x-svc-approve']);
  assert.is(w.mcp.calls.length, 1);
});

test('an answer refused before it took effect (402) leaves the approval waiting; answering again runs the call', async () => {
  const { conv, id, requestId } = await waiting();
  const cap = await w.admin.ok<{ id: string }>('POST', '/budget-caps', { amount_micro_usd: 1, period: 'month' });
  const headers = { 'x-svc-conversation': conv, 'x-svc-approve': id };
  try {
    assert.equal((await refusal(w.client.chat.completions.create(ask, { headers }))).slice(0, 2), [402, 'budget_exceeded']);
  } finally {
    await w.admin.ok('DELETE', `/budget-caps/${cap.id}`);
  }
  assert.equal(w.mcp.calls, [], 'nothing ran');
  assert.equal((await w.calls(requestId)).map((r) => [r.outcome, r.answer, r.answer_request_id]), [['pending', null, null]], 'the call waits again');
  w.mock.enqueue({ reply: { content: 'Item 42 is deleted.' } });
  const done = await w.client.chat.completions.create(ask, { headers });
  assert.is(done.choices[0]!.message.content, 'Item 42 is deleted.');
  assert.equal(w.mcp.calls, [{ tool: 'delete_item', args: { id: '42' } }]);
  assert.equal((await w.calls(requestId)).map((r) => [r.outcome, r.answer]), [['pending', 'approved']]);
});

test('streamed: the pending approval comes in a final chunk before [DONE]', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [del] } });
  const res = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', 'x-svc-conversation': conv },
    body: JSON.stringify({ ...ask, stream: true }),
  });
  assert.is(res.status, 200);
  const events = (await res.text()).split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
  assert.is(events.at(-1), '[DONE]');
  const last = JSON.parse(events.at(-2)!);
  assert.equal(last.choices, []);
  assert.equal(last.svc.pending_approval.tool, 'files__delete_item');
  assert.equal(last.svc.pending_approval.arguments, { id: '42' });
  assert.not.ok(events.slice(0, -2).some((e) => e.includes('tool_calls') || e.includes('pending_approval')));
  assert.equal(w.mcp.calls, []);
});

test('streamed approve: the approved call runs and the continued reply streams', async () => {
  const { conv, id } = await waiting();
  w.mock.enqueue({ chunks: ['Item 42 ', 'is gone.'] });
  const stream = await w.client.chat.completions.create({ ...ask, stream: true }, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } });
  let content = '';
  for await (const c of stream) content += c.choices[0]?.delta.content ?? '';
  assert.is(content, 'Item 42 is gone.');
  assert.equal(w.mcp.calls, [{ tool: 'delete_item', args: { id: '42' } }]);
  assert.equal(upstreamBodies(w.mock)[1].messages.at(-1), { role: 'tool', content: 'deleted 42', tool_call_id: del.id });
});

test("history: an approval's answer adds only its reply; the resent messages are not stored twice", async () => {
  const { conv, id } = await waiting();
  w.mock.enqueue({ reply: { content: 'Item 42 is deleted.' } });
  await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } });
  const asKey = new Admin(w.svc.url, w.apiKey);
  const read = async () => (await asKey.ok<any>('GET', `/workspaces/${w.workspaceId}/conversations/${conv}`)).messages.map((m: any) => m.message);
  assert.ok((await eventually(async () => (await read()).length >= 3, 3000)) >= 0, 'history not written');
  assert.equal(await read(), [ask.messages[0], { role: 'assistant', content: 'I will delete it.' }, { role: 'assistant', content: 'Item 42 is deleted.' }]);
});

test('two calls needing approval in one turn: approving the first runs it and stops at the second, without a model call', async () => {
  const conv = await w.conversation();
  const a = call('files__delete_item', { id: '1' }, 'd1');
  const b = call('files__delete_item', { id: '2' }, 'd2');
  w.mock.enqueue({ reply: { content: null, tool_calls: [a, b] } });
  const first = (await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } })) as any;
  assert.equal(first.svc.pending_approval.arguments, { id: '1' });
  const second = (await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': first.svc.pending_approval.id } })) as any;
  assert.equal(second.svc.pending_approval.arguments, { id: '2' });
  assert.equal(second.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, 'no model call, nothing charged');
  assert.is(upstreamBodies(w.mock).length, 1);
  w.mock.enqueue({ reply: { content: 'Both deleted.' } });
  const done = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': second.svc.pending_approval.id } });
  assert.is(done.choices[0]!.message.content, 'Both deleted.');
  assert.equal(w.mcp.calls.map((c) => c.args), [{ id: '1' }, { id: '2' }]);
  assert.equal(upstreamBodies(w.mock)[1].messages.slice(-3).map((m: any) => [m.role, m.tool_call_id ?? null, m.content]), [
    ['assistant', null, null], ['tool', 'd1', 'deleted 1'], ['tool', 'd2', 'deleted 2'],
  ]);
});

test('deny: the call is refused and the model told; the denying request records it refused, the stopped one keeps pending with the answer', async () => {
  const { conv, id, requestId } = await waiting();
  w.mock.enqueue({ reply: { content: 'Understood, I did not delete it.' } });
  const { data, response } = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-deny': id } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Understood, I did not delete it.');
  assert.equal(upstreamBodies(w.mock)[1].messages.at(-1), { role: 'tool', content: 'The user refused this tool call.', tool_call_id: del.id });
  assert.equal(w.mcp.calls, []);
  const denying = response.headers.get('x-svc-request-id')!;
  const [stopped] = await w.calls(requestId);
  assert.equal([stopped.tool, stopped.outcome, stopped.approval_id, stopped.answer, stopped.answer_request_id], ['delete_item', 'pending', id, 'refused', denying]);
  const denied = await w.calls(denying);
  assert.equal(denied.map((r) => [r.tool, r.outcome, r.approval_id, r.server_id, r.arguments_sha256, r.answer]), [['delete_item', 'refused', id, w.serverId, stopped.arguments_sha256, null]]);
  // Its trace links the refusal to this record.
  await w.svc.service.get(TracingFlushToken)();
  const trace = await w.admin.ok<any>('GET', `/requests/${denying}`);
  const span = trace.spans.find((s: any) => s.name === 'tool.call');
  assert.equal([span.attributes['svc.outcome'], span.attributes['svc.tool_call_id'], span.attributes['svc.approval_id']], ['refused', denied[0].id, id]);
});

test('unknown approval id, another key of the same person, another person: 404 not_found; nothing runs', async () => {
  const { conv, id } = await waiting();
  const unknown = w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': 'apr_doesnotexist0000' } });
  assert.equal(await refusal(unknown), [404, 'not_found', 'x-svc-approve']);
  const otherKey = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: await w.admin.key(w.workspaceId, 'second key'), maxRetries: 0 });
  assert.equal(await refusal(otherKey.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } })), [404, 'not_found', 'x-svc-approve']);
  assert.equal(await refusal(otherKey.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-deny': id } })), [404, 'not_found', 'x-svc-deny']);
  await w.admin.ok('POST', '/persons', { email: 'tools-other@example.test', password: 'another long password' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email: 'tools-other@example.test', role: 'member' });
  const other = await Admin.signIn(w.svc.url, 'tools-other@example.test', 'another long password');
  const theirs = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: await other.key(w.workspaceId), maxRetries: 0 });
  const theirConv = await w.conversation(other);
  assert.equal(await refusal(theirs.chat.completions.create(ask, { headers: { 'x-svc-conversation': theirConv, 'x-svc-approve': id } })), [404, 'not_found', 'x-svc-approve']);
  assert.equal(w.mcp.calls, []);
  assert.is(upstreamBodies(w.mock).length, 1, 'no refused answer reached the model');
  // Still waiting for its own caller.
  w.mock.enqueue({ reply: { content: 'Deleted.' } });
  await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id } });
  assert.is(w.mcp.calls.length, 1);
});

test('always: a key gets 403 forbidden; a person approves the tool for good and later calls run without asking', async () => {
  const { conv, id } = await waiting();
  const byKey = w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv, 'x-svc-approve': id, 'x-svc-approve-scope': 'always' } });
  assert.equal(await refusal(byKey), [403, 'forbidden', 'x-svc-approve-scope']);
  assert.equal(w.mcp.calls, []);
  const person = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.admin.token, maxRetries: 0, defaultHeaders: { 'x-svc-workspace': w.workspaceId } });
  const mine = await waiting(person, await w.conversation(w.admin));
  w.mock.enqueue({ reply: { content: 'Deleted for good.' } });
  await person.chat.completions.create(ask, { headers: { 'x-svc-conversation': mine.conv, 'x-svc-approve': mine.id, 'x-svc-approve-scope': 'always' } });
  assert.equal(w.mcp.calls.length, 1);
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__delete_item', { id: '43' })] } });
  w.mock.enqueue({ reply: { content: 'Deleted 43 too.' } });
  const r = await person.chat.completions.create(ask, { headers: { 'x-svc-conversation': mine.conv } });
  assert.is(r.choices[0]!.message.content, 'Deleted 43 too.');
  assert.equal(w.mcp.calls.map((c) => c.args), [{ id: '42' }, { id: '43' }]);
});

test('malformed answers: approve without a conversation, approve and deny together, a scope other than always → 400', async () => {
  const h = (headers: Record<string, string>) => w.client.chat.completions.create(ask, { headers });
  assert.equal(await refusal(h({ 'x-svc-approve': 'apr_x' })), [400, 'invalid_request', 'x-svc-conversation']);
  const conv = await w.conversation();
  assert.equal(await refusal(h({ 'x-svc-conversation': conv, 'x-svc-approve': 'a', 'x-svc-deny': 'b' })), [400, 'invalid_request', 'x-svc-deny']);
  assert.equal(await refusal(h({ 'x-svc-conversation': conv, 'x-svc-approve': 'a', 'x-svc-approve-scope': 'once' })), [400, 'invalid_request', 'x-svc-approve-scope']);
  assert.is(upstreamBodies(w.mock).length, 0);
});

test.run();
