import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { startWorld, type World } from '../support/provision.js';

// The admin API additions the UI needs: the Requests routes (tracing plugin) and the CSRF rule
// for cookie-signed changes (admin-api plugin).
const test = suite(`admin-ui: requests API and CSRF (${shape})`);
let w: World;
let upstream: MockUpstream;
const ids: string[] = [];

test.before(async () => {
  upstream = await new MockUpstream().start();
  w = await startWorld();
  await w.admin.provider('local', upstream.url);
  await w.admin.model('local:mock-model');
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  for (const model of ['local:mock-model', 'local:mock-model', 'local:nope']) {
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).asResponse().catch((e: { headers: Headers }) => e);
    ids.push(res.headers.get('x-svc-request-id')!);
  }
  await w.svc.service.get(TracingFlushToken)();
});
test.after(async () => {
  await w?.stop();
  await upstream?.stop();
});

interface Page { data: Array<Record<string, unknown>>; next_cursor: string | null }

test('GET /requests pages newest first with a cursor and filters by outcome and id', async () => {
  const first = await w.admin.ok<Page>('GET', '/requests?limit=2');
  assert.equal(first.data.map((r) => r.id), [ids[2], ids[1]]);
  assert.type(first.next_cursor, 'string');
  const second = await w.admin.ok<Page>('GET', `/requests?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
  assert.equal(second.data.map((r) => r.id), [ids[0]]);
  assert.is(second.next_cursor, null);
  const failed = await w.admin.ok<Page>('GET', '/requests?outcome=error');
  assert.equal(failed.data.map((r) => [r.id, r.status, r.error_code]), [[ids[2], 404, 'model_not_found']]);
  const one = await w.admin.ok<Page>('GET', `/requests?id=${ids[0]}`);
  assert.is(one.data.length, 1);
  assert.equal({ ...one.data[0], created_at: 0, latency_ms: 0, ttft_ms: 0, cost_micro_usd: 0 }, {
    id: ids[0], created_at: 0, workspace_id: w.workspaceId, person_id: one.data[0]!.person_id, key_id: one.data[0]!.key_id, provider: 'local',
    model: 'local:mock-model', prompt_tokens: 1, completion_tokens: 5, cost_micro_usd: 0, status: 200, error_code: null, latency_ms: 0, ttft_ms: 0, stream: false, route: null, routing_rule: 'explicit',
  });
  const bad = await w.admin.call<{ error: { code: string; param: string } }>('GET', '/requests?cursor=nope');
  assert.is(bad.status, 400);
  assert.equal([bad.body.error.code, bad.body.error.param], ['invalid_request', 'cursor']);
});

test('GET /requests/{id}: the record and its spans with phase timings; 404 for an unknown id', async () => {
  const t = await w.admin.ok<{ request: { id: string }; spans: Array<{ name: string; parent_span_id: string | null; offset_us: number; attributes: Record<string, unknown> }> }>('GET', `/requests/${ids[0]}`);
  assert.is(t.request.id, ids[0]);
  assert.equal(t.spans.map((s) => s.name).sort(), ['chat.completions', 'upstream.attempt']);
  const root = t.spans.find((s) => s.parent_span_id === null)!;
  assert.is(root.offset_us, 0);
  assert.ok('dispatch' in (root.attributes['svc.phases_us'] as object));
  const missing = await w.admin.call<{ error: { code: string; param: string } }>('GET', '/requests/req_unknown');
  assert.is(missing.status, 404);
  assert.equal([missing.body.error.code, missing.body.error.param], ['not_found', 'id']);
});

test('workspace admins see their own workspace only; a key cannot read instance requests', async () => {
  const mine = await w.admin.ok<Page>('GET', `/workspaces/${w.workspaceId}/requests`);
  assert.is(mine.data.length, 3);
  const other = await w.admin.workspace();
  assert.is((await w.admin.ok<Page>('GET', `/workspaces/${other}/requests`)).data.length, 0);
  assert.is((await w.admin.call('GET', `/workspaces/${other}/requests/${ids[0]}`)).status, 404);
  assert.is((await w.admin.call('GET', `/workspaces/${w.workspaceId}/requests/${ids[0]}`)).status, 200);
  const byKey = await fetch(`${w.svc.url}/admin/v1/requests`, { headers: { authorization: `Bearer ${w.apiKey}` } });
  assert.is(byKey.status, 403);
  const doc = (await (await fetch(`${w.svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const p of ['/admin/v1/requests', '/admin/v1/requests/{id}', '/admin/v1/workspaces/{workspaceId}/requests', '/admin/v1/workspaces/{workspaceId}/requests/{id}']) assert.ok(doc.paths[p], p);
});

test('a cookie-signed change needs x-svc-csrf (403 without); bearer tokens and reads do not', async () => {
  const cookie = `svc_session=${w.admin.token}`;
  let n = 0; // workspace names are unique
  const post = (headers: Record<string, string>) =>
    fetch(`${w.svc.url}/admin/v1/workspaces`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name: `csrf ${++n}` }) });
  const refused = await post({ cookie });
  assert.is(refused.status, 403);
  const body = (await refused.json()) as { error: { code: string; message: string } };
  assert.is(body.error.code, 'forbidden');
  assert.match(body.error.message, /x-svc-csrf/);
  assert.is((await post({ cookie, 'x-svc-csrf': '1' })).status, 201);
  assert.is((await post({ authorization: `Bearer ${w.admin.token}` })).status, 201);
  assert.is((await fetch(`${w.svc.url}/admin/v1/me`, { headers: { cookie } })).status, 200);
});

test.run();
