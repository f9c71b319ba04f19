import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { call, clientTool, model, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

const test = suite(`tools: the server-side loop (${shape})`);
let w: ToolsWorld;

test.before(async () => {
  w = await startToolsWorld();
});
test.after(async () => w?.stop());
test.before.each(() => {
  w.mock.reset();
  w.mcp.calls.length = 0;
});

const ask = (conv: string, text = 'What is an owl?') => ({ model, messages: [{ role: 'user' as const, content: text }], tools: [clientTool] });

test('whole: the workspace tool is offered, run, and the loop continues; usage sums both calls; a record links to the trace', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' })], usage: { prompt_tokens: 10, completion_tokens: 5 } } });
  w.mock.enqueue({ reply: { content: 'An owl is a bird.', usage: { prompt_tokens: 20, completion_tokens: 6 } } });
  const { data, response } = await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'An owl is a bird.');
  assert.is(data.choices[0]!.message.tool_calls, undefined);
  assert.equal(data.usage, { prompt_tokens: 30, completion_tokens: 11, total_tokens: 41 });
  const [first, second] = upstreamBodies(w.mock);
  assert.equal(first.tools.map((t: any) => t.function.name).sort(), ['files__delete_item', 'files__echo', 'files__fail', 'files__flood', 'files__hang', 'files__lookup', 'files__recall', 'weather']);
  assert.equal(second.messages.slice(-2), [
    { role: 'assistant', content: null, tool_calls: [call('files__lookup', { q: 'owl' })] },
    { role: 'tool', content: 'found: owl', tool_call_id: 'call_files__lookup' },
  ]);
  assert.equal(w.mcp.calls, [{ tool: 'lookup', args: { q: 'owl' } }]);
  const records = await w.calls(response.headers.get('x-svc-request-id')!);
  const args = JSON.stringify({ q: 'owl' });
  assert.equal(records.map((r) => [r.tool, r.outcome, r.arguments_bytes, r.arguments_sha256, r.server_id]), [
    ['lookup', 'ok', Buffer.byteLength(args), createHash('sha256').update(args).digest('hex'), w.serverId],
  ]);
  assert.ok(Number.isInteger(records[0].duration_ms));
});

test('streamed: one stream across the tool round trip; no tool progress or workspace call reaches the client', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'wren' })] } });
  w.mock.enqueue({ chunks: ['A wren ', 'is small.'], usage: { prompt_tokens: 9, completion_tokens: 4 } });
  const stream = await w.client.chat.completions.create({ ...ask(conv), stream: true, stream_options: { include_usage: true } }, { headers: { 'x-svc-conversation': conv } });
  let content = '';
  const chunks: any[] = [];
  for await (const c of stream) {
    chunks.push(c);
    content += c.choices[0]?.delta.content ?? '';
  }
  assert.is(content, 'A wren is small.');
  assert.not.ok(chunks.some((c) => c.choices[0]?.delta?.tool_calls), 'no tool call deltas');
  assert.not.ok(JSON.stringify(chunks).includes('found: wren'), 'no tool result in the stream');
  assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason), ['stop']);
  assert.ok(chunks.at(-1).usage.total_tokens > 0);
  assert.is(upstreamBodies(w.mock).length, 2);
  assert.equal(upstreamBodies(w.mock)[1].messages.at(-1), { role: 'tool', content: 'found: wren', tool_call_id: 'call_files__lookup' });
});

test("the client's own tool call is returned to the client as today", async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('weather', { city: 'Oslo' })] } });
  const r = await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } });
  assert.equal(r.choices[0]!.message.tool_calls, [call('weather', { city: 'Oslo' })]);
  assert.is(r.choices[0]!.finish_reason, 'tool_calls');
  assert.is(w.mcp.calls.length, 0);
});

test('without x-svc-conversation no workspace tool is offered', async () => {
  w.mock.enqueue({ reply: { content: 'plain' } });
  await w.client.chat.completions.create(ask(''));
  assert.equal(upstreamBodies(w.mock)[0].tools.map((t: any) => t.function.name), ['weather']);
});

test('a failing, a hanging and a flooding tool give the model error results, never a 5xx; recorded as error', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__fail', { q: 'x' }, 'c1'), call('files__hang', {}, 'c2'), call('files__flood', {}, 'c3')] } });
  w.mock.enqueue({ reply: { content: 'Sorry, the tools failed.' } });
  const { data, response } = await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Sorry, the tools failed.');
  const results = upstreamBodies(w.mock)[1].messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content]);
  assert.equal(results, [
    ['c1', 'The tool reported an error: server-side failure for x'],
    ['c2', 'The tool did not answer in time.'],
    ['c3', "The tool's answer was too large to use."],
  ]);
  const records = await w.calls(response.headers.get('x-svc-request-id')!);
  assert.equal(records.map((r) => [r.tool, r.outcome]), [['fail', 'error'], ['hang', 'error'], ['flood', 'error']]);
});

test('the step limit: after maxSteps tool rounds the model is asked without the workspace tools', async () => {
  const conv = await w.conversation();
  for (let i = 0; i < 3; i++) w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: `w${i}` }, `s${i}`)] } });
  w.mock.enqueue({ reply: { content: 'Done looking.' } });
  const r = await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } });
  assert.is(r.choices[0]!.message.content, 'Done looking.');
  const bodies = upstreamBodies(w.mock);
  assert.is(bodies.length, 4);
  assert.equal(bodies[3].tools.map((t: any) => t.function.name), ['weather']);
});

test('an origin the instance admins do not allow: the model is told, the record says denied, the server is not called', async () => {
  assert.ok((await w.admin.ok<{ data: string[] }>('GET', '/tool-origins')).data.includes(w.mcp.origin));
  assert.is((await w.admin.call('DELETE', `/tool-origins?origin=${encodeURIComponent(w.mcp.origin)}`)).status, 204);
  assert.not.ok((await w.admin.ok<{ data: string[] }>('GET', '/tool-origins')).data.includes(w.mcp.origin));
  try {
    const conv = await w.conversation();
    w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'hawk' })] } });
    w.mock.enqueue({ reply: { content: 'I cannot look that up.' } });
    const { data, response } = await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } }).withResponse();
    assert.is(response.status, 200);
    assert.is(data.choices[0]!.message.content, 'I cannot look that up.');
    assert.equal(upstreamBodies(w.mock)[1].messages.at(-1).content, "This tool cannot be used: its server is not on the instance administrators' allow-list.");
    assert.equal(w.mcp.calls, []);
    assert.equal((await w.calls(response.headers.get('x-svc-request-id')!)).map((r) => [r.tool, r.outcome]), [['lookup', 'denied']]);
  } finally {
    await w.admin.ok('POST', '/tool-origins', { origin: w.mcp.origin });
  }
});

test('admin API: tools listed with settings (read-only ones need no approval); disabling a tool stops offering it; origins need an instance admin', async () => {
  const tools = await w.ws('GET', `/tool-servers/${w.serverId}/tools`);
  assert.is(tools.status, 200);
  const byName = Object.fromEntries(tools.body.data.map((t: any) => [t.name, t]));
  assert.equal(byName.delete_item, { name: 'delete_item', function_name: 'files__delete_item', description: 'Deletes an item (no annotations: needs approval)', enabled: true, needs_approval: true, read_only: false });
  assert.is(byName.lookup.needs_approval, false);
  const off = await w.ws('PATCH', `/tool-servers/${w.serverId}/tools/echo`, { enabled: false });
  assert.equal(off.body, { name: 'echo', enabled: false, needs_approval: false });
  try {
    const conv = await w.conversation();
    w.mock.enqueue({ reply: { content: 'ok' } });
    await w.client.chat.completions.create(ask(conv), { headers: { 'x-svc-conversation': conv } });
    assert.not.ok(upstreamBodies(w.mock)[0].tools.some((t: any) => t.function.name === 'files__echo'));
  } finally {
    await w.ws('PATCH', `/tool-servers/${w.serverId}/tools/echo`, { enabled: true });
  }
  const list = await w.ws('GET', '/tool-servers');
  assert.equal(list.body.data.map((s: any) => [s.name, s.url, s.has_credentials]), [['files', w.mcp.url, false]]);
});

test.run();
