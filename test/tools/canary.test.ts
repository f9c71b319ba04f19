import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { shape } from '../support/harness.js';
import { resultCanary } from '../support/mcp-server.js';
import { call, model, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

const test = suite(`tools: arguments, results and tokens never leak (${shape})`);
let w: ToolsWorld;

test.before(async () => {
  w = await startToolsWorld();
});
test.after(async () => w?.stop());

const argCanary = 'tool-argument-canary-3c9e77';
const failCanary = 'tool-failure-canary-0d4b12';
const tokenCanary = 'tool-bearer-canary-6a1f90';

test('tool arguments, results, server error texts and stored tokens never reach logs, spans, records or errors', async () => {
  const second = await w.ws('POST', '/tool-servers', { name: 'vault', url: w.mcp.url, bearer_token: tokenCanary });
  assert.is(second.status, 201);
  assert.is(second.body.has_credentials, true);
  const conv = await w.conversation();
  const h = { 'x-svc-conversation': conv };
  const ask = { model, messages: [{ role: 'user' as const, content: 'Use the tools' }] };
  w.mock.enqueue({ reply: { content: null, tool_calls: [
    call('files__echo', { say: argCanary }, 'a1'), call('vault__recall', {}, 'a2'), call('files__fail', { q: failCanary }, 'a3'), call('files__hang', { q: argCanary }, 'a4'),
  ] } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const { response } = await w.client.chat.completions.create(ask, { headers: h }).withResponse();
  const requestId = response.headers.get('x-svc-request-id')!;
  const results = upstreamBodies(w.mock)[1].messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
  assert.equal(results.slice(0, 3), [`echo: ${argCanary}`, resultCanary, `The tool reported an error: server-side failure for ${failCanary}`], 'the model does get them');
  assert.ok(w.mcp.calls.some((c) => c.tool === 'recall'), 'the bearer server was really called');
  assert.ok(w.mcp.authorizations.has(`Bearer ${tokenCanary}`), 'with its stored token');
  // An approval with the canary in its arguments, refused by another key: its error carries none of them.
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__delete_item', { id: argCanary })] } });
  const pending = (await w.client.chat.completions.create(ask, { headers: h })) as any;
  assert.equal(pending.svc.pending_approval.arguments, { id: argCanary });
  const wrong = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${await w.admin.key(w.workspaceId, 'k2')}`, 'content-type': 'application/json', ...h, 'x-svc-approve': pending.svc.pending_approval.id },
    body: JSON.stringify(ask),
  });
  const wrongText = await wrong.text();
  assert.is(wrong.status, 404);
  const secrets = [argCanary, resultCanary, failCanary, tokenCanary];
  for (const s of secrets) assert.not.ok(wrongText.includes(s), 'error body');
  const records = JSON.stringify(await w.calls(requestId));
  assert.ok(records.includes('"outcome":"ok"'));
  for (const s of secrets) assert.not.ok(records.includes(s), 'tool call records');
  const store = w.svc.service.get(StoreToken);
  await new Promise((r) => setTimeout(r, 300)); // spans and usage are written behind the response
  const tables = JSON.stringify([
    await store.execute('select * from spans'), await store.execute('select * from usage_records'), await store.execute('select * from tool_calls'), await store.execute('select * from tool_servers'),
  ]);
  for (const s of secrets) assert.not.ok(tables.includes(s), `stored rows carry ${s}`);
  await w.svc.service.stop();
  for (const s of secrets) assert.not.ok(w.svc.logs.text.includes(s), `logs carry ${s}`);
  assert.equal(w.svc.logs.events('tools.call_failed').map((e) => e.kind), ['timeout']);
});

test.run();
