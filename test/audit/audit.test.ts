import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AuditToken, RetentionToken, StoreToken } from '../../kernel/index.js';
import { shape } from '../support/harness.js';
import { Admin, adminEmail, adminPassword } from '../support/provision.js';
import { models, startRoutingWorld, type RoutingWorld } from '../routing/support.js';
import { unpack } from '../diagnostics/unpack.js';
import { entry, entries, secrets, type Entry } from './support.js';

const test = suite(`audit: every administrative change is recorded (${shape})`);
let w: RoutingWorld;
let adminId: string;

test.before(async () => {
  w = await startRoutingWorld();
  adminId = (await w.admin.ok<{ person: { id: string } }>('GET', '/me')).person.id;
});
test.after(async () => w?.stop());

const list = (query = '') => entries(w.admin, query);

test('sign-ins and failed sign-ins: who, from where, never the e-mail or password typed', async () => {
  const signIn = (email: string, password: string) =>
    fetch(`${w.svc.url}/admin/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  assert.is((await signIn(adminEmail, secrets.wrongPassword)).status, 401);
  assert.is((await signIn(secrets.unknownEmail, secrets.wrongPassword)).status, 401);
  assert.is((await signIn(adminEmail, adminPassword)).status, 201);
  const [ok, unknown, wrong] = await list('?action=session.sign_in');
  assert.equal(entry(ok!), {
    action: 'session.sign_in', outcome: 'success', actor_id: adminId, actor_via: null, actor_key_id: null, client_address: '127.0.0.1',
    route: 'POST /sessions', resource_type: 'sessions', resource_id: adminId, workspace_id: null, fields: ['email', 'password'], values: {}, error_code: null,
  });
  assert.is(wrong!.outcome, 'failure');
  assert.is(wrong!.actor_id, adminId, 'a wrong password for a known e-mail names the account');
  assert.is(wrong!.error_code, 'invalid_api_key');
  assert.is(unknown!.actor_id, null, 'an unknown e-mail names nobody, and is not kept');
  assert.match(ok!.request_id!, /^req_/);
  assert.ok(Math.abs(Date.parse(ok!.created_at) - Date.now()) < 60_000);
});

test('persons: creation and suspension with the safe values; the password is named, never kept', async () => {
  const p = await w.admin.ok<{ id: string }>('POST', '/persons', { email: secrets.personEmail, name: 'Pat Canary', password: secrets.personPassword, instance_admin: false });
  await w.admin.ok('PATCH', `/persons/${p.id}`, { status: 'suspended' });
  const [suspended, created] = await list(`?resource_id=${p.id}`);
  assert.equal(entry(created!), {
    action: 'persons.create', outcome: 'success', actor_id: adminId, actor_via: 'session', actor_key_id: null, client_address: '127.0.0.1',
    route: 'POST /persons', resource_type: 'persons', resource_id: p.id, workspace_id: null,
    fields: ['email', 'instance_admin', 'name', 'password'], values: { instance_admin: false }, error_code: null,
  });
  assert.is(suspended!.action, 'persons.update');
  assert.equal(suspended!.values, { status: 'suspended' });
});

test('keys: creation and revocation, in their workspace', async () => {
  const k = await w.admin.ok<{ id: string; key: string }>('POST', `/workspaces/${w.workspaceId}/keys`, { name: 'audited key' });
  secrets.extra.push(k.key);
  await w.admin.ok('DELETE', `/workspaces/${w.workspaceId}/keys/${k.id}`);
  const [revoked, created] = await list(`?resource_id=${k.id}`);
  assert.is(created!.action, 'keys.create');
  assert.is(created!.workspace_id, w.workspaceId);
  assert.equal(created!.fields, ['name']);
  assert.is(revoked!.action, 'keys.delete');
  assert.is(revoked!.route, 'DELETE /workspaces/:workspaceId/keys/:keyId');
});

test('budgets: a cap created, changed and deleted, with amounts and periods', async () => {
  const cap = await w.admin.ok<{ id: string }>('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'workspace', amount_micro_usd: 5_000_000, period: 'month', alert_thresholds: [50, 90] });
  await w.admin.ok('PATCH', `/workspaces/${w.workspaceId}/budget-caps/${cap.id}`, { amount_micro_usd: 7_500_000 });
  await w.admin.ok('DELETE', `/workspaces/${w.workspaceId}/budget-caps/${cap.id}`);
  const [deleted, changed, created] = await list(`?resource_id=${cap.id}`);
  assert.is(created!.action, 'budget-caps.create');
  assert.equal(created!.values, { amount_micro_usd: 5_000_000, period: 'month', scope: 'workspace', 'alert_thresholds.length': 2 });
  assert.equal(changed!.values, { amount_micro_usd: 7_500_000 });
  assert.is(deleted!.action, 'budget-caps.delete');
  assert.is(deleted!.workspace_id, w.workspaceId);
});

test('routing: changes made with an API key name the key; model names are fields, not values', async () => {
  const asKey = new Admin(w.svc.url, w.apiKey);
  assert.is((await asKey.call('PATCH', `/workspaces/${w.workspaceId}/routing`, { default_model: models.general })).status, 200);
  assert.is((await w.ws('POST', '/routes', { name: 'audited', model: models.coder })).status, 201);
  const [route] = await list('?action=routes.create');
  assert.is(route!.resource_id, 'audited');
  const [settings] = await list('?action=routing.update');
  assert.is(settings!.actor_via, 'key');
  assert.match(settings!.actor_key_id!, /^key_/);
  assert.is(settings!.actor_id, adminId);
  assert.equal(settings!.fields, ['default_model']);
  assert.equal(settings!.values, {});
});

test('a provider key is named as changed and never kept (canary)', async () => {
  await w.admin.ok('POST', '/providers', { name: 'canary-provider', address: 'http://127.0.0.1:9', api_key: secrets.providerKey });
  const [p] = await list('?action=providers.create');
  assert.equal(p!.fields, ['address', 'api_key', 'name']);
  assert.equal(p!.values, {});
  assert.is(p!.resource_id, 'canary-provider');
});

test('listing: filters by actor, outcome, workspace and time, pages newest first; workspace admins see their workspace only', async () => {
  const all = await list('?limit=200');
  assert.ok(all.length >= 15);
  const times = all.map((e) => Date.parse(e.created_at));
  assert.equal(times, [...times].sort((a, b) => b - a));
  assert.ok((await list('?outcome=failure')).every((e) => e.outcome === 'failure'));
  assert.ok((await list(`?actor_id=${adminId}`)).every((e) => e.actor_id === adminId));
  assert.ok((await list(`?workspace_id=${w.workspaceId}`)).every((e) => e.workspace_id === w.workspaceId));
  assert.equal(await list(`?until=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`), []);
  const first = await w.admin.ok<{ data: Entry[]; next_cursor: string }>('GET', '/audit-entries?limit=2');
  assert.is(first.data.length, 2);
  const second = await w.admin.ok<{ data: Entry[] }>('GET', `/audit-entries?limit=2&cursor=${first.next_cursor}`);
  assert.equal(second.data.map((e) => e.id), all.slice(2, 4).map((e) => e.id));
  assert.is((await w.admin.call<any>('GET', '/audit-entries?since=yesterday')).body.error.param, 'since');

  const mine = await w.admin.ok<{ data: Entry[] }>('GET', `/workspaces/${w.workspaceId}/audit-entries?limit=200`);
  assert.ok(mine.data.length >= 5 && mine.data.every((e) => e.workspace_id === w.workspaceId));
  // A member who is no workspace admin, and a person who is no instance admin, are refused.
  const member = await w.admin.ok<{ id: string }>('POST', '/persons', { email: 'member@example.test', password: 'member-password-long' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email: 'member@example.test', role: 'member' });
  const m = await Admin.signIn(w.svc.url, 'member@example.test', 'member-password-long');
  assert.is((await m.call('GET', `/workspaces/${w.workspaceId}/audit-entries`)).status, 403);
  assert.is((await m.call('GET', '/audit-entries')).status, 403);
  assert.ok(member.id);
});

test('append-only for everyone: no route changes an entry, and the database refuses updates and early deletes', async () => {
  assert.is((await w.admin.call('DELETE', '/audit-entries')).status, 404);
  assert.is((await w.admin.call('PATCH', '/audit-entries')).status, 404);
  const store = w.svc.service.get(StoreToken);
  const [one] = await list('?limit=1');
  const refusal = async (sql: string) => {
    try {
      await store.execute(sql, [one!.id]);
      return 'done';
    } catch (err) {
      return (err as Error).message;
    }
  };
  assert.match(await refusal("update audit_entries set action = 'nothing' where id = ?"), /audit entries are append-only/);
  assert.match(await refusal('delete from audit_entries where id = ?'), /audit entries are kept 13 months/);
  assert.is((await list('?limit=1'))[0]!.id, one!.id);
});

test('retention: 13 months by default and no shorter; entries older than that go, newer ones stay', async () => {
  const view = await w.admin.ok<{ kinds: Array<Record<string, unknown>> }>('GET', '/retention');
  const kind = view.kinds.find((k) => k.kind === 'audit_entries');
  assert.equal({ days: kind?.days, default_days: kind?.default_days, min_days: kind?.min_days }, { days: 396, default_days: 396, min_days: 396 });
  const shorter = await w.admin.call<any>('PUT', '/retention/periods', { periods: { audit_entries: 30 } });
  assert.is(shorter.status, 400);
  assert.is(shorter.body.error.param, 'periods.audit_entries');

  const before = (await list('?limit=200')).length;
  const old = { action: 'persons.update', outcome: 'success' as const, actor_id: adminId, actor_via: 'session' as const, actor_key_id: null, client_address: '127.0.0.1', request_id: null, route: null, resource_type: 'persons', resource_id: 'per_old', workspace_id: null, fields: [], values: {}, error_code: null };
  const audit = w.svc.service.get(AuditToken) as { record(e: typeof old, now?: number): Promise<void> };
  await audit.record(old, Date.now() - 400 * 86_400_000);
  await audit.record({ ...old, resource_id: 'per_recent' }, Date.now() - 390 * 86_400_000);
  const run = await w.svc.service.get(RetentionToken).run();
  assert.is(run!.counts.audit_entries, 1);
  assert.is(run!.status, 'done');
  assert.equal(await list('?resource_id=per_old'), []);
  assert.is((await list('?resource_id=per_recent')).length, 1);
  // A run with a clock far ahead still stays clear of what the database protects.
  const ahead = await w.svc.service.get(RetentionToken).run({ now: new Date(Date.now() + 500 * 86_400_000) });
  assert.is(ahead!.counts.audit_entries, 0, 'nothing younger than 396 days by the real clock goes');
  assert.is((await list('?resource_id=per_recent')).length, 1);
  assert.ok((await list('?limit=200')).length >= before);
});

test('the diagnostics bundle counts entries by outcome', async () => {
  const res = await fetch(`${w.svc.url}/admin/v1/diagnostics`, { headers: { authorization: `Bearer ${w.admin.token}` } });
  const files = await unpack(Buffer.from(await res.arrayBuffer()));
  const counts = JSON.parse(files.get('counts.json')!) as Record<string, Record<string, number>>;
  const n = (await list('?limit=200')).length;
  assert.ok(counts.audit_entries!.success! >= 10);
  assert.ok(counts.audit_entries!.failure! >= 2);
  assert.ok(counts.audit_entries!.success! + counts.audit_entries!.failure! >= n);
});

test('canary: no secret, password, token, key or typed e-mail appears in any entry', async () => {
  const text = JSON.stringify(await list('?limit=200'));
  for (const s of [adminPassword, w.admin.token, w.apiKey, ...secrets.all()]) assert.not.ok(text.includes(s), `${s.slice(0, 6)}… leaked`);
});

test.run();
