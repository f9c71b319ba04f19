import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createBacking } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin } from '../support/provision.js';
import { client, eventually, newKey, personId, provision, startInstance, type Instance } from './support.js';

const test = suite('budgets: admin API — caps, settings, spend reporting, alerts');

interface Env { svc: Instance; mock: MockUpstream; drop(): Promise<void> }
let env: Env;

test.before(async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const svc = await startInstance(backing, { budgets: { alertWebhook: { attempts: 2, backoffMs: 10, timeoutMs: 1000 } } });
  await provision(svc.admin, mock, { big: { input: '10.00', output: '40.00' }, small: { input: '1.00', output: '2.00' } });
  env = { svc, mock, drop: async () => { await svc.stop(); await mock.stop(); await backing.drop(); } };
});
test.after(() => env.drop());

/** A second person, member (not admin) of `workspaceId`, signed in. */
async function member(admin: Admin, workspaceId: string, email: string): Promise<Admin> {
  const password = 'another long password';
  await admin.ok('POST', '/persons', { email, password });
  await admin.ok('POST', `/workspaces/${workspaceId}/members`, { email, role: 'member' });
  return Admin.signIn(admin.url, email, password);
}

test('caps: create, list with spend, change, delete; validation and access', async () => {
  const { admin } = env.svc;
  const ws = await admin.workspace();
  const other = await admin.workspace();
  const me = await personId(admin);
  const key = await newKey(admin, ws);
  const foreignKey = await newKey(admin, other);
  const created = await admin.call<Record<string, unknown>>('POST', `/workspaces/${ws}/budget-caps`, { scope: 'member', person_id: me, amount_micro_usd: 5_000_000, period: 'week' });
  assert.is(created.status, 201);
  assert.equal({ ...created.body, id: 'x', period_key: 'x' }, {
    id: 'x', scope: 'member', workspace_id: ws, person_id: me, key_id: null, amount_micro_usd: 5_000_000, period: 'week',
    alert_thresholds: [50, 80, 100], period_key: 'x', spent_micro_usd: 0, remaining_micro_usd: 5_000_000,
  });
  const dup = await admin.call<{ error: { code: string; param: string } }>('POST', `/workspaces/${ws}/budget-caps`, { scope: 'member', person_id: me, amount_micro_usd: 1, period: 'week' });
  assert.equal([dup.status, dup.body.error.code, dup.body.error.param], [400, 'invalid_request', 'period']);
  const badKey = await admin.call<{ error: { param: string } }>('POST', `/workspaces/${ws}/budget-caps`, { scope: 'key', key_id: foreignKey.id, amount_micro_usd: 1, period: 'day' });
  assert.equal([badKey.status, badKey.body.error.param], [400, 'key_id']);
  const badPeriod = await admin.call<{ error: { param: string } }>('POST', '/budget-caps', { amount_micro_usd: 1, period: 'year' });
  assert.equal([badPeriod.status, badPeriod.body.error.param], [400, 'period']);
  const keyCap = await admin.ok<{ id: string }>('POST', `/workspaces/${ws}/budget-caps`, { scope: 'key', key_id: key.id, amount_micro_usd: 2_000_000, period: 'day', alert_thresholds: [90, 10, 90] });
  const patched = await admin.ok<{ amount_micro_usd: number; alert_thresholds: number[] }>('PATCH', `/workspaces/${ws}/budget-caps/${keyCap.id}`, { amount_micro_usd: 3_000_000 });
  assert.equal([patched.amount_micro_usd, patched.alert_thresholds], [3_000_000, [10, 90]]);
  assert.is((await admin.call('PATCH', `/workspaces/${other}/budget-caps/${keyCap.id}`, { amount_micro_usd: 1 })).status, 404, 'a cap of another workspace');
  const list = await admin.ok<{ data: Array<{ id: string }> }>('GET', `/workspaces/${ws}/budget-caps`);
  assert.is(list.data.length, 2);
  assert.is((await admin.call('DELETE', `/workspaces/${ws}/budget-caps/${keyCap.id}`)).status, 204);
  assert.is((await admin.ok<{ data: unknown[] }>('GET', `/workspaces/${ws}/budget-caps`)).data.length, 1);

  // Instance caps: listed with the workspace caps, changed and removed by instance admins.
  const inst = await admin.ok<{ id: string }>('POST', '/budget-caps', { amount_micro_usd: 9_000_000, period: 'lifetime' });
  const everything = await admin.ok<{ data: Array<{ id: string; scope: string; spent_micro_usd: number }> }>('GET', '/budget-caps');
  assert.ok(everything.data.some((c) => c.id === inst.id && c.scope === 'instance'));
  assert.ok(everything.data.length >= 2, 'the workspace caps are listed too');
  const changed = await admin.ok<{ amount_micro_usd: number }>('PATCH', `/budget-caps/${inst.id}`, { amount_micro_usd: 8_000_000 });
  assert.is(changed.amount_micro_usd, 8_000_000);
  assert.is((await admin.call('DELETE', `/budget-caps/${inst.id}`)).status, 204);
  assert.is((await admin.call('DELETE', `/budget-caps/${inst.id}`)).status, 404);

  const m = await member(admin, ws, 'member1@example.test');
  const denied = await m.call<{ error: { code: string } }>('GET', `/workspaces/${ws}/budget-caps`);
  assert.equal([denied.status, denied.body.error.code], [403, 'forbidden']);
  assert.is((await m.call('POST', '/budget-caps', { amount_micro_usd: 1, period: 'day' })).status, 403);
  assert.is((await m.call('GET', `/workspaces/${other}/budget-caps`)).status, 404);
  assert.is((await m.call('GET', '/spend')).status, 403);
  assert.is((await m.call('GET', `/workspaces/${ws}/spend`)).status, 403);
  const doc = (await (await fetch(`${admin.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const path of ['/budget-caps', '/workspaces/{workspaceId}/budget-caps', '/spend', '/budget-alerts', '/budget-alert-webhook']) {
    assert.ok(Object.keys(doc.paths).some((p) => p.endsWith(path)), `${path} in the OpenAPI document`);
  }
});

test('budget fallback model: set, shown, refused when unknown; a cap with no room moves requests to it', async () => {
  const { svc } = env;
  const ws = await svc.admin.workspace();
  const key = await newKey(svc.admin, ws);
  const bad = await svc.admin.call<{ error: { param: string } }>('PUT', `/workspaces/${ws}/budget-settings`, { fallback_model: 'mock:nope' });
  assert.equal([bad.status, bad.body.error.param], [400, 'fallback_model']);
  await svc.admin.ok('PUT', `/workspaces/${ws}/budget-settings`, { fallback_model: 'mock:small' });
  assert.equal(await svc.admin.ok('GET', `/workspaces/${ws}/budget-settings`), { fallback_model: 'mock:small' });
  // Room for the small model's hold (~1,100) but not the big one's (~41,000) with max_tokens 1000.
  await svc.admin.ok('POST', `/workspaces/${ws}/budget-caps`, { scope: 'key', key_id: key.id, amount_micro_usd: 5_000, period: 'day' });
  const { data, response } = await client(svc, key.value).chat.completions.create({ model: 'mock:big', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.model, 'mock:small');
  assert.is(response.headers.get('x-svc-model'), 'mock:small');
  assert.is(response.headers.get('x-svc-fallback-from'), 'mock:big');
  assert.is(response.headers.get('x-svc-fallback-scope'), 'key');
  assert.is(env.mock.requests.at(-1)!.body.model, 'small');
});

test('spend reporting: totals and daily series by model, key, provider; a provider split by workspace', async () => {
  const { svc } = env;
  const ws = await svc.admin.workspace();
  const k1 = await newKey(svc.admin, ws);
  const k2 = await newKey(svc.admin, ws);
  env.mock.enqueue({ reply: { content: 'x', usage: { prompt_tokens: 1000, completion_tokens: 100 } } });
  env.mock.enqueue({ reply: { content: 'y', usage: { prompt_tokens: 2000, completion_tokens: 500 } } });
  await client(svc, k1.value).chat.completions.create({ model: 'mock:big', messages: [{ role: 'user', content: 'hi' }], max_tokens: 600 });
  await client(svc, k2.value).chat.completions.create({ model: 'mock:small', messages: [{ role: 'user', content: 'hi' }], max_tokens: 600 });
  const big = 1000 * 10 + 100 * 40; // micro-USD
  const small = 2000 * 1 + 500 * 2;
  const today = new Date().toISOString().slice(0, 10);
  type Report = { total: { cost_micro_usd: number; requests: number }; series: Array<{ date: string; cost_micro_usd: number }>; groups: Array<{ id: string; cost_micro_usd: number; prompt_tokens: number }> };
  let byKey = {} as Report;
  await eventually(svc, async () => {
    byKey = await svc.admin.ok<Report>('GET', `/workspaces/${ws}/spend?group_by=key`);
    assert.is(byKey.total.cost_micro_usd, big + small);
  });
  assert.equal(byKey.series.map((s) => [s.date, s.cost_micro_usd]), [[today, big + small]]);
  assert.equal(byKey.groups.map((g) => [g.id, g.cost_micro_usd]), [[k1.id, big], [k2.id, small]]);
  const byModel = await svc.admin.ok<Report>('GET', `/spend?workspace_id=${ws}&group_by=model`);
  assert.equal(byModel.groups.map((g) => [g.id, g.cost_micro_usd, g.prompt_tokens]), [['mock:big', big, 1000], ['mock:small', small, 2000]]);
  const split = await svc.admin.ok<Report>('GET', '/spend?provider=mock&group_by=workspace');
  assert.ok(split.groups.some((g) => g.id === ws && g.cost_micro_usd === big + small));
  const byPerson = await svc.admin.ok<Report>('GET', `/workspaces/${ws}/spend?group_by=person&from=${today}&to=${today}`);
  assert.is(byPerson.groups.length, 1);
  // Without group_by (issue 9 item 5: PostgreSQL refused `group by ''` with a 500).
  const all = await svc.admin.ok<Report>('GET', '/spend');
  assert.ok(all.total.cost_micro_usd >= big + small);
  assert.is(all.groups, undefined);
  const mine = await svc.admin.ok<Report>('GET', `/workspaces/${ws}/spend`);
  assert.equal([mine.total.cost_micro_usd, mine.total.requests, mine.series.map((s) => [s.date, s.cost_micro_usd])], [big + small, 2, [[today, big + small]]]);
  assert.equal(svc.logs.events('request.failed'), []);
  const bad = await svc.admin.call<{ error: { param: string } }>('GET', '/spend?from=yesterday');
  assert.equal([bad.status, bad.body.error.param], [400, 'from']);
});

interface Hook { server: Server; url: string; got: Array<{ body: string; signature: string | undefined }>; status: number }
async function webhook(): Promise<Hook> {
  const h: Hook = { server: createServer(), url: '', got: [], status: 200 };
  h.server.on('request', (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      h.got.push({ body, signature: req.headers['x-svc-signature'] as string | undefined });
      res.writeHead(h.status).end();
    });
  });
  await new Promise<void>((r) => h.server.listen(0, '127.0.0.1', r));
  h.url = `http://127.0.0.1:${(h.server.address() as { port: number }).port}/hooks/CANARY-url-token-4711`;
  return h;
}

test('alerts: crossing a threshold once per period is recorded, signed, delivered; a failing webhook is given up on', async () => {
  const { svc } = env;
  const hook = await webhook();
  const secret = 'CANARY-webhook-secret-0042';
  try {
    const set = await svc.admin.ok('PUT', '/budget-alert-webhook', { url: hook.url, secret });
    assert.equal(set, { configured: true, host: new URL(hook.url).host, has_secret: true });
    const ws = await svc.admin.workspace();
    const key = await newKey(svc.admin, ws);
    const cap = await svc.admin.ok<{ id: string }>('POST', `/workspaces/${ws}/budget-caps`, { scope: 'workspace', amount_micro_usd: 100_000, period: 'month', alert_thresholds: [10, 50] });
    const c = client(svc, key.value);
    // 15,000 micro-USD: crosses 10 % (and not 50 %); the same threshold is not raised again.
    for (let i = 0; i < 2; i++) {
      env.mock.enqueue({ reply: { content: 'ok', usage: { prompt_tokens: 1000, completion_tokens: 125 } } });
      await c.chat.completions.create({ model: 'mock:big', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 });
      await eventually(svc, async () => assert.is((await svc.sql<{ n: number }>('select count(*) as n from budget_holds where workspace_id = ?', [ws])).map((r) => Number(r.n))[0], i + 1));
      await svc.flush(); // the charge of that hold, written (and its alerts delivered) for sure
    }
    assert.is(hook.got.length, 1);
    const payload = JSON.parse(hook.got[0]!.body) as Record<string, unknown>;
    assert.equal([payload.cap_id, payload.scope, payload.scope_id, payload.threshold_percent, payload.spent_micro_usd], [cap.id, 'workspace', ws, 10, 15_000]);
    assert.is(hook.got[0]!.signature, `sha256=${createHmac('sha256', secret).update(hook.got[0]!.body).digest('hex')}`);
    const alerts = await svc.admin.ok<{ data: Array<{ id: string; state: string; attempts: number; threshold_percent: number }> }>('GET', '/budget-alerts');
    const mine = alerts.data.filter((a) => a.id === payload.id);
    assert.equal(mine.map((a) => [a.state, a.attempts, a.threshold_percent]), [['sent', 1, 10]]);
    assert.equal(svc.logs.events('budget.alert_delivered').at(-1), { ...svc.logs.events('budget.alert_delivered').at(-1), alert_id: payload.id, scope: 'workspace', threshold: 10, attempts: 1 });

    // The webhook fails: two attempts (config), then given up.
    hook.status = 500;
    env.mock.enqueue({ reply: { content: 'ok', usage: { prompt_tokens: 4000, completion_tokens: 1000 } } });
    await c.chat.completions.create({ model: 'mock:big', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 });
    await eventually(svc, async () => assert.is(hook.got.length, 3));
    const after = await svc.admin.ok<{ data: Array<{ cap_id: string; state: string; attempts: number; threshold_percent: number }> }>('GET', '/budget-alerts');
    assert.equal(after.data.filter((a) => a.cap_id === cap.id && a.threshold_percent === 50).map((a) => [a.state, a.attempts]), [['given_up', 2]]);
    assert.is(svc.logs.events('budget.alert_given_up').length, 1);

    // The secret and the address's token never appear in logs or responses after being set.
    const view = JSON.stringify(await svc.admin.ok('GET', '/budget-alert-webhook'));
    for (const canary of ['CANARY-webhook-secret-0042', 'CANARY-url-token-4711']) {
      assert.not.ok(svc.logs.text.includes(canary), `${canary} in logs`);
      assert.not.ok(view.includes(canary), `${canary} in the webhook view`);
      assert.not.ok(JSON.stringify(after).includes(canary), `${canary} in alerts`);
    }
    // Stored encrypted, like provider keys.
    const stored = JSON.stringify(await svc.sql('select * from budget_settings'));
    assert.not.ok(stored.includes('CANARY-webhook-secret-0042'), 'webhook secret stored in plaintext');
  } finally {
    await svc.admin.ok('PUT', '/budget-alert-webhook', { url: null });
    await new Promise((r) => hook.server.close(r));
  }
});

test.run();
