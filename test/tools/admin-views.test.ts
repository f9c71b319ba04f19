import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { call, model, startToolsWorld, type ToolsWorld } from './support.js';

// What the admin UI's Tools page reads beyond the listing: whether a server's origin is allowed,
// and tool call records paged by cursor (newest first; one request's in the order they ran).
const test = suite(`tools: server origin state and paged call records (${shape})`);
let w: ToolsWorld;
const requests: string[] = [];

test.before(async () => {
  w = await startToolsWorld();
  for (const q of ['owl', 'wren', 'kite']) {
    const conv = await w.conversation();
    w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q })] } });
    w.mock.enqueue({ reply: { content: `A ${q}.` } });
    const { response } = await w.client.chat.completions
      .create({ model, messages: [{ role: 'user', content: `What is a ${q}?` }] }, { headers: { 'x-svc-conversation': conv } })
      .withResponse();
    requests.push(response.headers.get('x-svc-request-id')!);
  }
});
test.after(async () => w?.stop());

interface Page { data: Array<{ id: string; request_id: string; tool: string; outcome: string }>; next_cursor: string | null }

test('origin_allowed says whether svc may contact a server; it follows the allow-list', async () => {
  const other = await w.ws('POST', '/tool-servers', { name: 'elsewhere', url: 'http://127.0.0.1:9/mcp', transport: 'sse' });
  assert.is(other.status, 201);
  assert.is(other.body.origin_allowed, false);
  const list = await w.ws<{ data: Array<{ name: string; origin_allowed: boolean }> }>('GET', '/tool-servers');
  assert.equal(list.body.data.map((s) => [s.name, s.origin_allowed]).sort(), [['elsewhere', false], ['files', true]]);
  await w.admin.ok('POST', '/tool-origins', { origin: 'http://127.0.0.1:9' });
  const after = await w.ws<{ data: Array<{ name: string; origin_allowed: boolean }> }>('GET', '/tool-servers');
  assert.ok(after.body.data.find((s) => s.name === 'elsewhere')!.origin_allowed);
  assert.is((await w.admin.call('DELETE', '/tool-origins?origin=http%3A%2F%2F127.0.0.1%3A9')).status, 204);
  assert.is((await w.ws('DELETE', `/tool-servers/${other.body.id}`)).status, 204);
});

test('GET tool-calls pages newest first with next_cursor; the last page has none', async () => {
  const first = await w.ws<Page>('GET', '/tool-calls?limit=2');
  assert.is(first.status, 200);
  assert.equal(first.body.data.map((r) => r.request_id), [requests[2], requests[1]]);
  assert.type(first.body.next_cursor, 'string');
  const second = await w.ws<Page>('GET', `/tool-calls?limit=2&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
  assert.equal(second.body.data.map((r) => [r.request_id, r.tool, r.outcome]), [[requests[0], 'lookup', 'ok']]);
  assert.is(second.body.next_cursor, null);
  const all = await w.ws<Page>('GET', '/tool-calls');
  assert.is(all.body.data.length, 3);
  assert.is(all.body.next_cursor, null);
});

test("with request_id: that request's calls only; a malformed cursor is refused naming it", async () => {
  const one = await w.ws<Page>('GET', `/tool-calls?request_id=${requests[1]}`);
  assert.equal(one.body.data.map((r) => r.request_id), [requests[1]]);
  assert.is(one.body.next_cursor, null);
  const bad = await w.ws<{ error: { code: string; param: string } }>('GET', '/tool-calls?cursor=nope');
  assert.is(bad.status, 400);
  assert.equal([bad.body.error.code, bad.body.error.param], ['invalid_request', 'cursor']);
  const doc = (await (await fetch(`${w.svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, any> };
  const get = doc.paths['/admin/v1/workspaces/{workspaceId}/tool-calls']!.get;
  assert.ok(get.parameters.some((p: { name: string }) => p.name === 'cursor'));
});

test.run();
