import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { StoreToken } from '../../kernel/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, startWorld, type World } from '../support/provision.js';

// The admin API additions of issue 28: the home dashboard, the Requests explorer's filters and
// route/rule columns, a member's own requests and usage, a cap's period, removing a person.
const test = suite(`admin-ui: dashboard, request filters, my usage, people (${shape})`);
let w: World;
let upstream: MockUpstream;
let member: Admin;
let memberId = '';
let memberKey = '';
const ids: Record<string, string> = {};
type Err = { error: { code: string; param: string | null; message: string } };

test.before(async () => {
  upstream = await new MockUpstream().start();
  w = await startWorld();
  await w.admin.provider('local', upstream.url);
  await w.admin.model('local:mock-model', { input_price: '1.00', output_price: '1.00' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/routes`, { name: 'code', model: 'local:mock-model', description: 'Programming help' });
  memberId = (await w.admin.ok<{ id: string }>('POST', '/persons', { email: 'member@example.test', password: 'a long member password' })).id;
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email: 'member@example.test', role: 'member' });
  member = await Admin.signIn(w.svc.url, 'member@example.test', 'a long member password');
  memberKey = (await member.ok<{ key: string }>('POST', `/workspaces/${w.workspaceId}/keys`, { name: 'member laptop' })).key;
  const send = async (name: string, apiKey: string, model: string) => {
    const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey, maxRetries: 0 });
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).asResponse().catch((e: { headers: Headers }) => e);
    ids[name] = res.headers.get('x-svc-request-id')!;
  };
  await send('route', w.apiKey, 'route/code');
  await send('member', memberKey, 'local:mock-model');
  await send('missing', w.apiKey, 'local:nope');
  await w.svc.service.get(TracingFlushToken)();
});
test.after(async () => {
  await w?.stop();
  await upstream?.stop();
});

interface Page { data: Array<Record<string, unknown>>; next_cursor: string | null }

test('GET /dashboard: totals, latency percentiles, series buckets, top lists with the route; workspace admins get theirs, members 403', async () => {
  const d = await w.admin.ok<any>('GET', '/dashboard?range=24h');
  assert.is(d.range, '24h');
  assert.is(d.bucket_ms, 3_600_000);
  assert.is(d.series.length, 24);
  assert.equal([d.totals.requests, d.totals.errors], [3, 1]);
  assert.ok(d.totals.cost_micro_usd > 0);
  assert.type(d.totals.p50_ms, 'number');
  assert.ok(d.totals.p95_ms >= d.totals.p50_ms);
  assert.is(d.series.reduce((s: number, b: { requests: number }) => s + b.requests, 0), 3);
  assert.equal(d.top.models.map((m: { id: string; requests: number }) => [m.id, m.requests]), [['local:mock-model', 2], [null, 1]], 'an unknown model is recorded without one');
  assert.equal(d.top.routes.map((r: { id: string; requests: number }) => [r.id, r.requests]), [['code', 1]]);
  assert.ok(d.top.persons.some((p: { id: string }) => p.id === memberId));
  assert.equal(d.upstream_errors, []);
  const week = await w.admin.ok<any>('GET', '/dashboard?range=7d');
  assert.equal([week.series.length, week.bucket_ms], [28, 6 * 3_600_000]);
  const bad = await w.admin.call<Err>('GET', '/dashboard?range=1y');
  assert.equal([bad.status, bad.body.error.code, bad.body.error.param], [400, 'invalid_request', 'range']);
  const ws = await w.admin.ok<any>('GET', `/workspaces/${w.workspaceId}/dashboard`);
  assert.is(ws.totals.requests, 3);
  const denied = await member.call<Err>('GET', `/workspaces/${w.workspaceId}/dashboard`);
  assert.equal([denied.status, denied.body.error.code], [403, 'forbidden']);
  assert.is((await member.call('GET', '/dashboard')).status, 403);
});

test('GET /dashboard counts routes over the whole range in the database, not only the latest 5,000 requests', async () => {
  // 5,000 request spans of another workspace, newer than the three real requests: a count over
  // the latest 5,000 would miss the real route/code request. Inserted straight: the fixture.
  const store = w.svc.service.get(StoreToken);
  const now = Date.now();
  for (let start = 0; start < 5000; start += 500) {
    const rows = Array.from({ length: 500 }, (_, i) => {
      const attributes = JSON.stringify({ 'svc.workspace_id': 'ws_elsewhere', 'svc.route': 'bulk', 'svc.cost_micro_usd': 3 });
      return [`bulk${String(start + i).padStart(6, '0')}`, 'root', null, 'chat.completions', now * 1000 + start + i, 1000, 'ok', attributes];
    });
    await store.execute(`insert into spans (trace_id, span_id, parent_span_id, name, start_us, duration_us, status, attributes) values ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`, rows.flat());
  }
  const all = await w.admin.ok<any>('GET', '/dashboard?range=24h');
  assert.equal(all.top.routes.map((r: { id: string; requests: number; cost_micro_usd: number }) => [r.id, r.requests, r.cost_micro_usd]), [['bulk', 5000, 15_000], ['code', 1, all.top.routes[1]?.cost_micro_usd]]);
  assert.ok(all.top.routes[1].cost_micro_usd > 0, 'the route/code request cost something');
  const ws = await w.admin.ok<any>('GET', `/workspaces/${w.workspaceId}/dashboard?range=24h`);
  assert.equal(ws.top.routes.map((r: { id: string; requests: number }) => [r.id, r.requests]), [['code', 1]], 'another workspace’s routes are not counted');
  await store.execute("delete from spans where trace_id like 'bulk%'");
});

test('GET /requests: route and rule columns; filters by route, rule, status, error code, person, time', async () => {
  const byRoute = await w.admin.ok<Page>('GET', '/requests?route=code');
  assert.equal(byRoute.data.map((r) => [r.id, r.route, r.routing_rule]), [[ids.route, 'code', 'explicit']]);
  assert.equal((await w.admin.ok<Page>('GET', '/requests?routing_rule=explicit')).data.map((r) => r.id), [ids.member, ids.route]);
  assert.equal((await w.admin.ok<Page>('GET', '/requests?status=404')).data.map((r) => [r.id, r.error_code]), [[ids.missing, 'model_not_found']]);
  assert.equal((await w.admin.ok<Page>('GET', '/requests?error_code=model_not_found')).data.map((r) => r.id), [ids.missing]);
  assert.equal((await w.admin.ok<Page>('GET', `/requests?person_id=${memberId}`)).data.map((r) => r.id), [ids.member]);
  assert.equal((await w.admin.ok<Page>('GET', '/requests?route=co%25')).data, [], 'a LIKE wildcard matches only itself');
  assert.equal((await w.admin.ok<Page>('GET', `/requests?from=${new Date(Date.now() + 60_000).toISOString()}`)).data, []);
  assert.is((await w.admin.ok<Page>('GET', `/requests?from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`)).data.length, 3);
  const bad = await w.admin.call<Err>('GET', '/requests?from=yesterday');
  assert.equal([bad.status, bad.body.error.code, bad.body.error.param, bad.body.error.message], [400, 'invalid_request', 'from', 'from must be a time such as 2026-05-01T00:00:00Z.']);
  const trace = await w.admin.ok<{ request: Record<string, unknown>; spans: Array<{ parent_span_id: string | null; attributes: Record<string, unknown> }> }>('GET', `/requests/${ids.route}`);
  assert.equal([trace.request.route, trace.request.routing_rule], ['code', 'explicit']);
  const root = trace.spans.find((s) => s.parent_span_id === null)!;
  assert.equal([root.attributes['svc.route'], root.attributes['svc.routing_rule'], root.attributes['svc.person_id']], ['code', 'explicit', trace.request.person_id]);
});

test('a member: their own requests and traces only; the workspace list stays for admins', async () => {
  const mine = await member.ok<Page>('GET', `/workspaces/${w.workspaceId}/my-requests`);
  assert.equal(mine.data.map((r) => [r.id, r.person_id]), [[ids.member, memberId]]);
  assert.equal((await member.ok<Page>('GET', `/workspaces/${w.workspaceId}/my-requests?person_id=someone-else`)).data.map((r) => r.id), [ids.member], 'person_id cannot be widened');
  assert.is((await member.ok<{ request: { id: string } }>('GET', `/workspaces/${w.workspaceId}/my-requests/${ids.member}`)).request.id, ids.member);
  const other = await member.call<Err>('GET', `/workspaces/${w.workspaceId}/my-requests/${ids.route}`);
  assert.equal([other.status, other.body.error.code], [404, 'not_found']);
  const list = await member.call<Err>('GET', `/workspaces/${w.workspaceId}/requests`);
  assert.equal([list.status, list.body.error.code], [403, 'forbidden']);
});

test('GET /model-uses: the routes (model, fallback) and settings (default, pinned) naming a model, every workspace; instance admins only', async () => {
  await w.admin.model('local:spare');
  const other = await w.admin.workspace();
  await w.admin.ok('POST', `/workspaces/${other}/routes`, { name: 'docs', model: 'local:spare', fallbacks: ['local:mock-model'] });
  await w.admin.ok('PATCH', `/workspaces/${other}/routing`, { default_model: 'local:mock-model', pinned_model: 'local:spare' });
  const uses = await w.admin.ok<{ data: Array<{ workspace_id: string; where: string; route: string | null }> }>('GET', `/model-uses?model=${encodeURIComponent('local:mock-model')}`);
  const key = (u: { workspace_id: string; where: string; route: string | null }) => `${u.workspace_id}/${u.where}/${u.route}`;
  assert.equal(uses.data.map(key).sort(), [`${w.workspaceId}/route/code`, `${other}/fallback/docs`, `${other}/default_model/null`].sort());
  const spare = await w.admin.ok<{ data: Array<{ workspace_id: string; where: string; route: string | null }> }>('GET', '/model-uses?model=local%3Aspare');
  assert.equal(spare.data.map(key).sort(), [`${other}/route/docs`, `${other}/pinned_model/null`].sort());
  assert.equal((await w.admin.ok<{ data: unknown[] }>('GET', '/model-uses?model=local%3Aunused')).data, []);
  const missing = await w.admin.call<Err>('GET', '/model-uses');
  assert.equal([missing.status, missing.body.error.param], [400, 'model']);
  assert.is((await member.call('GET', '/model-uses?model=x')).status, 403);
});

test('GET /providers/{name}/models: the provider’s own list, named as here and marked when added; a refused key is 502; unknown 404', async () => {
  upstream.models = ['mock-model', 'mock-large', 'mock-model'];
  const list = await w.admin.ok<{ data: Array<{ id: string; name: string; added: boolean }> }>('GET', '/providers/local/models');
  assert.equal(list.data, [{ id: 'mock-large', name: 'local:mock-large', added: false }, { id: 'mock-model', name: 'local:mock-model', added: true }]);
  const keyed = await new MockUpstream({ apiKey: 'sk-right' }).start();
  try {
    await w.admin.ok('POST', '/providers', { name: 'keyed', address: keyed.url, api_key: 'sk-wrong' });
    const refused = await w.admin.call<Err>('GET', '/providers/keyed/models');
    assert.equal([refused.status, refused.body.error.code, refused.body.error.message], [502, 'provider_auth_failed', 'Provider keyed refused the key.']);
    await w.admin.ok('PATCH', '/providers/keyed', { api_key: 'sk-right' });
    assert.equal((await w.admin.ok<{ data: Array<{ name: string }> }>('GET', '/providers/keyed/models')).data.map((m) => m.name), ['keyed:mock-model']);
    await w.admin.ok('DELETE', '/providers/keyed?confirm=keyed');
  } finally {
    await keyed.stop();
  }
  const gone = await w.admin.call<Err>('GET', '/providers/nope/models');
  assert.equal([gone.status, gone.body.error.code], [404, 'not_found']);
  assert.is((await member.call('GET', '/providers/local/models')).status, 403);
});

test('GET my-usage: the member’s spend by model and every cap that applies to them, with the least room', async () => {
  const inst = await w.admin.ok<{ id: string }>('POST', '/budget-caps', { amount_micro_usd: 100_000_000, period: 'month' });
  const wsCap = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'workspace', amount_micro_usd: 20_000_000, period: 'month' });
  const mineCap = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'member', person_id: memberId, amount_micro_usd: 5_000_000, period: 'day' });
  const adminsCap = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'member', person_id: (await w.admin.ok<any>('GET', '/me')).person.id, amount_micro_usd: 1, period: 'day' });
  const u = await member.ok<any>('GET', `/workspaces/${w.workspaceId}/my-usage`);
  assert.equal([u.workspace_id, u.person_id], [w.workspaceId, memberId]);
  assert.equal(u.spend.groups.map((g: { id: string; requests: number }) => [g.id, g.requests]), [['local:mock-model', 1]]);
  assert.equal(u.caps.map((c: { id: string }) => c.id).sort(), [inst.id, wsCap.id, mineCap.id].sort(), 'not the admin’s own member cap');
  const member5 = u.caps.find((c: { id: string }) => c.id === mineCap.id);
  assert.is(member5.remaining_micro_usd, 5_000_000 - member5.spent_micro_usd);
  assert.is(u.room_micro_usd, Math.min(...u.caps.map((c: { remaining_micro_usd: number }) => c.remaining_micro_usd)));
  const outsider = await member.call<Err>('GET', '/workspaces/ws_nope/my-usage');
  assert.is(outsider.status, 404);
  for (const id of [inst.id, wsCap.id, mineCap.id, adminsCap.id]) await w.admin.ok('DELETE', `/budget-caps/${id}`);
});

test('PATCH a cap’s period; a period the subject already has a cap for is refused at period', async () => {
  const day = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'workspace', amount_micro_usd: 1_000_000, period: 'day' });
  const week = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'workspace', amount_micro_usd: 2_000_000, period: 'week' });
  const moved = await w.admin.ok<{ period: string; amount_micro_usd: number; alert_thresholds: number[] }>('PATCH', `/workspaces/${w.workspaceId}/budget-caps/${day.id}`, { period: 'month', amount_micro_usd: 3_000_000, alert_thresholds: [75] });
  assert.equal([moved.period, moved.amount_micro_usd, moved.alert_thresholds], ['month', 3_000_000, [75]]);
  const taken = await w.admin.call<Err>('PATCH', `/workspaces/${w.workspaceId}/budget-caps/${day.id}`, { period: 'week' });
  assert.equal([taken.status, taken.body.error.code, taken.body.error.param, taken.body.error.message], [400, 'invalid_request', 'period', 'A week cap already exists for this workspace; change its amount instead.']);
  assert.is((await w.admin.ok<{ period: string }>('PATCH', `/workspaces/${w.workspaceId}/budget-caps/${week.id}`, { period: 'week' })).period, 'week', 'its own period is not "taken"');
  for (const id of [day.id, week.id]) await w.admin.ok('DELETE', `/budget-caps/${id}`);
});

test('DELETE /persons/{id}: not yourself, not a workspace’s only admin; otherwise their keys and sessions end at once', async () => {
  const me = (await w.admin.ok<any>('GET', '/me')).person.id;
  const self = await w.admin.call<Err>('DELETE', `/persons/${me}`);
  assert.equal([self.status, self.body.error.code, self.body.error.message], [400, 'invalid_request', 'You cannot remove yourself.']);
  const lead = await w.admin.ok<{ id: string }>('POST', '/persons', { email: 'lead@example.test' });
  const solo = await w.admin.ok<{ id: string }>('POST', '/workspaces', { name: 'Solo' });
  await w.admin.ok('POST', `/workspaces/${solo.id}/members`, { email: 'lead@example.test', role: 'admin' });
  await w.admin.ok('DELETE', `/workspaces/${solo.id}/members/${me}`);
  const sole = await w.admin.call<Err>('DELETE', `/persons/${lead.id}`);
  assert.equal([sole.status, sole.body.error.message], [400, 'lead@example.test is the only admin of “Solo”; make someone else its admin first.']);
  assert.is((await w.admin.call('DELETE', `/persons/${memberId}`)).status, 204);
  assert.is((await member.call('GET', '/me')).status, 401);
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: memberKey, maxRetries: 0 });
  const refused = await client.models.list().then(() => 0, (e: { status: number }) => e.status);
  assert.is(refused, 401);
  assert.is((await w.admin.call('GET', `/persons/${memberId}`)).status, 404);
  assert.is((await w.admin.call('DELETE', `/persons/${memberId}`)).status, 404);
  assert.is((await member.call('DELETE', `/persons/${lead.id}`)).status, 401);
});

test.run();
