import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { call, model, startToolsWorld, type ToolsWorld } from '../tools/support.js';
import { entries, secrets } from './support.js';

const test = suite(`audit: tool servers and tools approved "always" (${shape})`);
let w: ToolsWorld;

test.before(async () => {
  w = await startToolsWorld();
});
test.after(async () => w?.stop());

const ask = (text: string) => ({ model, messages: [{ role: 'user' as const, content: text }] });

test('a tool approved "always" in a conversation is recorded with who, where and which tool; never the prompt or arguments', async () => {
  const person = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.admin.token, maxRetries: 0, defaultHeaders: { 'x-svc-workspace': w.workspaceId } });
  const conv = await w.conversation(w.admin);
  const prompt = 'canary-prompt-delete-item-9f1';
  w.mock.enqueue({ reply: { content: 'I will delete it.', tool_calls: [call('files__delete_item', { id: 'canary-arg-77' })] } });
  const first = (await person.chat.completions.create(ask(prompt), { headers: { 'x-svc-conversation': conv } })) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const approval = first.svc.pending_approval.id as string;
  w.mock.enqueue({ reply: { content: 'Deleted for good.' } });
  const { response } = await person.chat.completions.create(ask(prompt), { headers: { 'x-svc-conversation': conv, 'x-svc-approve': approval, 'x-svc-approve-scope': 'always' } }).withResponse();
  const me = await w.admin.ok<{ person: { id: string } }>('GET', '/me');
  const [grant] = await entries(w.admin, '?action=tool_approval.always');
  assert.ok(grant, 'recorded');
  assert.equal(
    { actor_id: grant.actor_id, actor_via: grant.actor_via, client_address: grant.client_address, request_id: grant.request_id, route: grant.route, resource_type: grant.resource_type, resource_id: grant.resource_id, workspace_id: grant.workspace_id },
    { actor_id: me.person.id, actor_via: 'session', client_address: '127.0.0.1', request_id: response.headers.get('x-svc-request-id'), route: 'POST /v1/chat/completions', resource_type: 'tool_grant', resource_id: `${w.serverId}/delete_item`, workspace_id: w.workspaceId },
  );
  const text = JSON.stringify(await entries(w.admin, '?limit=200'));
  assert.not.ok(text.includes(prompt));
  assert.not.ok(text.includes('canary-arg-77'));
});

test('registering a tool server with a bearer token and changing a tool: the token is named, never kept', async () => {
  const r = await w.ws('POST', '/tool-servers', { name: 'tokened', url: w.mcp.url, bearer_token: secrets.toolToken });
  assert.is(r.status, 201);
  const [server] = await entries(w.admin, '?action=tool-servers.create');
  assert.equal(server!.fields, ['bearer_token', 'name', 'url']);
  assert.equal(server!.values, {});
  assert.is(server!.resource_id, r.body.id);
  const t = await w.ws('PATCH', `/tool-servers/${w.serverId}/tools/delete_item`, { enabled: false });
  assert.is(t.status, 200);
  const [tool] = await entries(w.admin, '?action=tool-servers.tools.update');
  assert.equal(tool!.values, { enabled: false });
  assert.is(tool!.resource_id, 'delete_item');
  assert.not.ok(JSON.stringify(await entries(w.admin, '?limit=200')).includes(secrets.toolToken));
});

test.run();
