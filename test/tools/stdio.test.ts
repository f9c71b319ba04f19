import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { unpack } from '../diagnostics/unpack.js';
import { shape } from '../support/harness.js';
import { startWorld } from '../support/provision.js';
import { call, model, upstreamBodies } from './support.js';
import { limits, startStdioWorld, stdioServer, type StdioWorld } from './stdio-world.js';

const test = suite(`tools: command-line (stdio) servers through the sandbox (${shape})`);
let w: StdioWorld;
/** A secret env value: it reaches the tool server and nothing else. */
const secretCanary = 'stdio-secret-env-canary-51d0c7';
const sha = (v: string) => createHash('sha256').update(v).digest('hex');

test.before(async () => {
  w = await startStdioWorld();
});
test.after(async () => w?.stop());
test.before.each(() => {
  w.mock.reset();
  w.mcp.calls.length = 0;
});

const ask = (text = 'Use the tools') => ({ model, messages: [{ role: 'user' as const, content: text }] });
/** Tool messages the model received in its n-th call of the last request(s), as [id, content]. */
const toolResults = (n: number) => upstreamBodies(w.mock)[n].messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content]);
const callEnds = () => w.sandbox.logs.filter((l) => l.event === 'sandbox.call_ended').map((l) => l.reason);
/** Calls ended so far, once the sandbox is idle (it logs a call's end after telling svc, and frees the slot after that). */
async function settledEnds(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const h = (await (await fetch(`${w.sandbox.url}/healthz`)).json()) as { free: number };
    if (h.free === 1) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 50)); // the log line travels through a pipe
  return callEnds().length;
}
/** The sandbox logs a call's end just after it told svc: the reasons of the calls after the first `from`, once there are `n`. */
async function endsAfter(from: number, n: number): Promise<unknown[]> {
  for (let i = 0; i < 50 && callEnds().length < from + n; i++) await new Promise((r) => setTimeout(r, 100));
  return callEnds().slice(from);
}

test('registering: a stdio server keeps its command line; secret env values are never shown; mistakes are 400', async () => {
  const r = await w.ws('POST', '/tool-servers', {
    name: 'local', transport: 'stdio', command: 'node', args: [stdioServer, 'modern'], env: { REGION: 'eu' }, secret_env: { SVC_TEST_TOKEN: secretCanary },
  });
  assert.is(r.status, 201);
  assert.equal(r.body, {
    id: r.body.id, name: 'local', url: null, transport: 'stdio', has_credentials: true, origin_allowed: true, created_at: r.body.created_at, auth: 'none', sign_in: null,
    command: 'node', args: [stdioServer, 'modern'], env: { REGION: 'eu' }, secret_env: ['SVC_TEST_TOKEN'],
  });
  assert.is((await w.ws('POST', '/tool-servers', { name: 'old', transport: 'stdio', command: 'node', args: [stdioServer, 'legacy'] })).status, 201);
  const listed = (await w.ws('GET', '/tool-servers')).body.data;
  assert.equal(listed.map((s: any) => [s.name, s.transport, s.url]), [['files', 'streamable-http', w.mcp.url], ['local', 'stdio', null], ['old', 'stdio', null]]);
  assert.not.ok(JSON.stringify(listed).includes(secretCanary));

  const bad = async (body: Record<string, unknown>) => {
    const res = await w.ws('POST', '/tool-servers', { name: 'bad', ...body });
    return [res.status, res.body.error?.code, res.body.error?.param];
  };
  assert.equal(await bad({ transport: 'stdio', args: ['x.js'] }), [400, 'invalid_request', 'command']);
  assert.equal(await bad({ transport: 'stdio', command: '/usr/bin/node' }), [400, 'invalid_request', 'command']);
  assert.equal(await bad({ transport: 'stdio', command: 'node -e "1"' }), [400, 'invalid_request', 'command']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', url: 'http://example.test/mcp' }), [400, 'invalid_request', 'url']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', bearer_token: 'x' }), [400, 'invalid_request', 'bearer_token']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', env: { HTTPS_PROXY: 'http://elsewhere:1' } }), [400, 'invalid_request', 'env']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', env: { '1X': 'y' } }), [400, 'invalid_request', 'env']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', env: { A: '1' }, secret_env: { A: '2' } }), [400, 'invalid_request', 'secret_env']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', args: ['a\u0000b'] }), [400, 'invalid_request', 'args']);
  assert.equal(await bad({ transport: 'stdio', command: 'node', auth: 'oauth' }), [400, 'invalid_request', 'auth']);
  assert.equal(await bad({ url: 'http://example.test/mcp', command: 'node' }), [400, 'invalid_request', 'command']);
  assert.equal(await bad({ transport: 'streamable-http' }), [400, 'invalid_request', 'url']);
});

test('an instance without the sandbox refuses stdio servers at registration', async () => {
  const plain = await startWorld();
  try {
    const res = await plain.admin.call<any>('POST', `/workspaces/${plain.workspaceId}/tool-servers`, { name: 'local', transport: 'stdio', command: 'node', args: ['x.js'] });
    assert.equal([res.status, res.body.error.code, res.body.error.param], [400, 'invalid_request', 'transport']);
  } finally {
    await plain.stop();
  }
});

test('its tools are listed through the sandbox (both protocol eras), with the usual default settings', async () => {
  const servers = (await w.ws('GET', '/tool-servers')).body.data;
  for (const name of ['local', 'old']) {
    const id = servers.find((s: any) => s.name === name).id;
    const tools = (await w.ws('GET', `/tool-servers/${id}/tools`)).body.data;
    assert.equal(tools.map((t: any) => [t.function_name, t.enabled, t.needs_approval]), [
      [`${name}__lookup`, true, false], [`${name}__delete_item`, true, true], [`${name}__whoami`, true, false], [`${name}__fetch`, true, false],
      [`${name}__hog`, true, false], [`${name}__hang`, true, false], [`${name}__flood`, true, false],
    ]);
  }
});

test('whole: the model calls stdio tools; each runs in a fresh sandbox call with its env and secret; records say ok', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__whoami', {}, 'c1'), call('old__lookup', { q: 'owl' }, 'c2'), call('files__lookup', { q: 'owl' }, 'c3')] } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const ended = await settledEnds();
  const { data, response } = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Done.');
  assert.ok(upstreamBodies(w.mock)[0].tools.some((t: any) => t.function.name === 'local__lookup'), 'stdio tools are offered');
  assert.equal(toolResults(1), [
    ['c1', `region=eu token_sha256=${sha(secretCanary)} uid=65534`],
    ['c2', 'stdio found: owl'],
    ['c3', 'found: owl'],
  ]);
  assert.equal(await endsAfter(ended, 2), ['closed', 'closed'], 'one sandbox call per tool call');
  const records = await w.calls(response.headers.get('x-svc-request-id')!);
  assert.equal(records.map((r) => [r.tool, r.outcome]), [['whoami', 'ok'], ['lookup', 'ok'], ['lookup', 'ok']]);
});

test('streamed: the stream stays open across the sandboxed call; nothing of it reaches the client', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__lookup', { q: 'wren' })] } });
  w.mock.enqueue({ chunks: ['A wren ', 'is small.'] });
  const stream = await w.client.chat.completions.create({ ...ask(), stream: true }, { headers: { 'x-svc-conversation': conv } });
  let content = '';
  const chunks: any[] = [];
  for await (const c of stream) {
    chunks.push(c);
    content += c.choices[0]?.delta.content ?? '';
  }
  assert.is(content, 'A wren is small.');
  assert.not.ok(JSON.stringify(chunks).includes('stdio found'), 'no tool result in the stream');
  assert.not.ok(chunks.some((c) => c.choices[0]?.delta?.tool_calls), 'no tool call deltas');
  assert.equal(upstreamBodies(w.mock)[1].messages.at(-1), { role: 'tool', content: 'stdio found: wren', tool_call_id: 'call_local__lookup' });
});

test('a stdio tool that needs approval waits for it, and runs in the sandbox once approved', async () => {
  const conv = await w.conversation();
  const del = call('local__delete_item', { id: '42' });
  w.mock.enqueue({ reply: { content: 'Deleting.', tool_calls: [del] } });
  const ended = await settledEnds();
  const first = (await w.client.chat.completions.create(ask('Delete 42'), { headers: { 'x-svc-conversation': conv } })) as any;
  assert.equal(first.svc.pending_approval, { id: first.svc.pending_approval.id, tool: 'local__delete_item', arguments: { id: '42' } });
  assert.is(callEnds().length, ended, 'nothing ran before the approval');
  w.mock.enqueue({ reply: { content: 'Item 42 is deleted.' } });
  const { data, response } = await w.client.chat.completions
    .create(ask('Delete 42'), { headers: { 'x-svc-conversation': conv, 'x-svc-approve': first.svc.pending_approval.id } })
    .withResponse();
  assert.is(data.choices[0]!.message.content, 'Item 42 is deleted.');
  assert.equal(upstreamBodies(w.mock)[1].messages.slice(-2), [
    { role: 'assistant', content: 'Deleting.', tool_calls: [del] },
    { role: 'tool', content: 'stdio deleted 42', tool_call_id: del.id },
  ]);
  assert.equal((await w.calls(response.headers.get('x-svc-request-id')!)).map((r) => [r.tool, r.outcome]), [['delete_item', 'ok']]);
});

test("where a stdio tool may connect is the instance admins' egress allow-list, pushed to the proxy", async () => {
  const target = { host: '127.0.0.1', port: w.hello.port };
  const entries = async () => (await (await fetch(`${w.egress.url}/healthz`)).json()) as { allowed: number };
  const fetched = async (id: string) => {
    const conv = await w.conversation();
    w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__fetch', { url: `http://127.0.0.1:${w.hello.port}/` }, id)] } });
    await w.client.chat.completions.create(ask('Fetch it'), { headers: { 'x-svc-conversation': conv } });
    return toolResults(upstreamBodies(w.mock).length - 1).find(([c]: [string]) => c === id)[1];
  };
  assert.equal(await w.admin.ok('GET', '/egress-allow-list'), { data: [], push: 'ok' });
  assert.equal(await entries(), { status: 'ok', allowed: 0 }, 'svc pushed its (empty) list at start');
  assert.equal(await fetched('f1'), '403 {"error":{"code":"egress_refused","reason":"not_allowed"}}');
  // A loopback destination needs allow_private as well as being listed.
  const added = await w.admin.call<any>('POST', '/egress-allow-list', { host: target.host, port: target.port });
  assert.equal([added.status, added.body], [201, { host: '127.0.0.1', port: w.hello.port, allow_private: false, push: 'ok' }]);
  assert.equal(await fetched('f2'), '403 {"error":{"code":"egress_refused","reason":"private_address"}}');
  await w.admin.ok('POST', '/egress-allow-list', { ...target, allow_private: true });
  assert.equal(await entries(), { status: 'ok', allowed: 1 });
  assert.equal(await fetched('f3'), '200 hello');
  assert.equal((await w.admin.ok<any>('GET', '/egress-allow-list')).data, [{ host: '127.0.0.1', port: w.hello.port, allow_private: true }]);
  assert.is((await w.admin.call('DELETE', `/egress-allow-list?host=127.0.0.1&port=${w.hello.port}`)).status, 204);
  assert.is((await w.admin.call('DELETE', `/egress-allow-list?host=127.0.0.1&port=${w.hello.port}`)).status, 404);
  assert.equal(await fetched('f4'), '403 {"error":{"code":"egress_refused","reason":"not_allowed"}}');
  assert.equal((await w.admin.call<any>('POST', '/egress-allow-list', { host: 'http://x.test/', port: 80 })).body.error.param, 'host');
  const asKey = await fetch(`${w.svc.url}/admin/v1/egress-allow-list`, { headers: { authorization: `Bearer ${w.apiKey}` } });
  assert.is(asKey.status, 403);
});

test('memory, message size, time and a busy sandbox give the model error results, never a 5xx', async () => {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__hog', { mb: limits.memoryMb * 3 }, 'm1'), call('local__flood', {}, 'm2')] } });
  const ended = await settledEnds();
  const r = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(r.response.status, 200);
  assert.equal(toolResults(1), [['m1', 'The tool ran out of memory.'], ['m2', "The tool's answer was too large to use."]]);
  assert.equal(await endsAfter(ended, 2), ['memory_limit', 'message_too_large']);
  assert.equal((await w.calls(r.response.headers.get('x-svc-request-id')!)).map((x) => x.outcome), ['error', 'error']);

  // One slot: a hanging call holds it until the sandbox's time limit; another call meanwhile finds no free slot.
  w.mock.reset();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__hang', {}, 'h1')] } });
  const hanging = w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': await w.conversation() } }).withResponse();
  for (let i = 0; i < 50; i++) {
    if (((await (await fetch(`${w.sandbox.url}/healthz`)).json()) as { free: number }).free === 0) break;
    await new Promise((done) => setTimeout(done, 100));
  }
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('local__lookup', { q: 'busy' }, 'b1')] } });
  const busy = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': await w.conversation() } }).withResponse();
  const { response } = await hanging;
  assert.equal([busy.response.status, response.status], [200, 200]);
  const results = upstreamBodies(w.mock).flatMap((b) => b.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content]));
  assert.equal(results.sort(), [
    ['b1', 'This tool cannot be used right now: the sandbox that runs command-line tools is busy. Try again later.'],
    ['h1', 'The tool did not answer in time.'],
  ]);
  // The sandbox logs a call's end after it answered svc, through a pipe: wait for the line.
  for (let i = 0; i < 50 && !callEnds().includes('time_limit'); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(callEnds().includes('time_limit'));
});

test('a server that ends itself on a request before initialize is asked again with initialize only, once', async () => {
  const added = await w.ws('POST', '/tool-servers', { name: 'strict', transport: 'stdio', command: 'node', args: [stdioServer, 'legacy', 'strict'] });
  const ended = await settledEnds();
  const tools = await w.ws('GET', `/tool-servers/${added.body.id}/tools`);
  assert.is(tools.status, 200);
  assert.is(tools.body.data[0].function_name, 'strict__lookup');
  assert.equal(await endsAfter(ended, 2), ['exited', 'closed'], 'the probe ended the first call; the second spoke initialize');
  const again = await settledEnds();
  assert.is((await w.ws('GET', `/tool-servers/${added.body.id}/tools?refresh=true`)).status, 200);
  assert.equal(await endsAfter(again, 1), ['closed'], 'remembered: no probe the second time');
  assert.is((await w.ws('DELETE', `/tool-servers/${added.body.id}`)).status, 204);
});

test('secret env values never reach admin responses, stored rows, the diagnostics bundle or any log', async () => {
  const local = (await w.ws('GET', '/tool-servers')).body.data.find((x: any) => x.name === 'local');
  const responses = JSON.stringify([local, (await w.ws('GET', `/tool-servers/${local.id}/tools`)).body, (await w.ws('GET', '/tool-calls')).body]);
  assert.ok(responses.includes('SVC_TEST_TOKEN'), 'the name is shown');
  assert.not.ok(responses.includes(secretCanary), 'admin responses');
  const store = w.svc.service.get(StoreToken);
  await new Promise((r) => setTimeout(r, 300)); // spans and usage are written behind the response
  const rows = JSON.stringify(await Promise.all(['spans', 'usage_records', 'tool_calls', 'tool_servers', 'tool_approvals'].map((t) => store.execute(`select * from ${t}`))));
  const [stored] = await store.execute<{ env: string }>("select env from tool_servers where name = 'local'");
  assert.equal(JSON.parse(stored!.env), { REGION: 'eu', SVC_TEST_TOKEN: null }, 'the stored env names the secret without its value');
  assert.not.ok(rows.includes(secretCanary), 'stored rows');
  const bundle = await fetch(`${w.svc.url}/admin/v1/diagnostics`, { headers: { authorization: `Bearer ${w.admin.token}` } });
  const files = await unpack(Buffer.from(await bundle.arrayBuffer()));
  assert.equal(JSON.parse(files.get('sandbox.json')!), { sandbox: { state: 'reachable' }, egress_proxy: { state: 'reachable' } });
  assert.not.ok([...files.values()].join('\n').includes(secretCanary), 'diagnostics bundle');
  for (const [name, text] of [['svc', w.svc.logs.text], ['sandbox', JSON.stringify(w.sandbox.logs)], ['egress', JSON.stringify(w.egress.logs)]]) {
    assert.not.ok(text!.includes(secretCanary), `${name} log`);
  }
  assert.ok(w.sandbox.logs.some((l) => l.event === 'sandbox.call_ended' && l.command === 'node'), 'the sandbox logged its calls (by command name only)');
});

/** One turn calling the remote `lookup` and the stdio one: the tool messages the model got, and the records. */
async function remoteAndStdio(stream: boolean): Promise<{ status: number; content: string; results: unknown; outcomes: unknown }> {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' }, 'r1'), call('local__lookup', { q: 'owl' }, 's1')] } });
  w.mock.enqueue({ chunks: ['Only ', 'one worked.'] });
  const res = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', 'x-svc-conversation': conv }, body: JSON.stringify({ ...ask(), stream }),
  });
  const text = await res.text();
  const content = stream
    ? text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '').join('')
    : JSON.parse(text).choices[0].message.content;
  const outcomes = (await w.calls(res.headers.get('x-svc-request-id')!)).map((r) => [r.tool, r.outcome]);
  return { status: res.status, content, results: toolResults(upstreamBodies(w.mock).length - 1), outcomes };
}

const unavailable = 'This tool cannot be used right now: the sandbox that runs command-line tools is not available.';

test('with the sandbox stopped: plain chat and remote tools still answer 200; the stdio tool tells the model it cannot be used now', async () => {
  process.kill(w.sandbox.child.pid!, 'SIGSTOP');
  try {
    w.mock.enqueue({ reply: { content: 'Plain answer.' } });
    const plain = await w.client.chat.completions.create(ask('Hello')).withResponse();
    assert.equal([plain.response.status, plain.data.choices[0]!.message.content], [200, 'Plain answer.']);
    w.mock.reset();
    const r = await remoteAndStdio(false);
    assert.equal([r.status, r.content], [200, 'Only one worked.']);
    assert.equal(r.results, [['r1', 'found: owl'], ['s1', unavailable]]);
    assert.equal(r.outcomes, [['lookup', 'ok'], ['lookup', 'error']]);
    assert.equal(w.mcp.calls, [{ tool: 'lookup', args: { q: 'owl' } }]);
    assert.is((await fetch(`${w.svc.url}/healthz`)).status, 200);
  } finally {
    process.kill(w.sandbox.child.pid!, 'SIGCONT');
  }
});

test('with the sandbox killed: the same, streamed; listing it fails for the admin; nothing of the secret was ever logged', async () => {
  w.sandbox.child.kill('SIGKILL');
  await w.sandbox.exited;
  const r = await remoteAndStdio(true);
  assert.equal([r.status, r.content], [200, 'Only one worked.']);
  assert.equal(r.results, [['r1', 'found: owl'], ['s1', unavailable]]);
  const health = await fetch(`${w.svc.url}/healthz`);
  assert.is(health.status, 200);
  assert.not.ok(Object.keys(((await health.json()) as { checks: object }).checks).some((k) => k.includes('sandbox')), 'the sandbox is no health dependency');
  const local = (await w.ws('GET', '/tool-servers')).body.data.find((x: any) => x.name === 'local');
  const listing = await w.ws('GET', `/tool-servers/${local.id}/tools?refresh=true`);
  assert.equal([listing.status, listing.body.error.code], [502, 'upstream_unavailable']);
  assert.ok(w.svc.logs.events('tools.call_failed').some((e) => e.kind === 'sandbox_unavailable'));
  await w.svc.service.stop();
  assert.not.ok(w.svc.logs.text.includes(secretCanary), 'svc log, to the end');
});

test.run();
