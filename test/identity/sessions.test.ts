import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { createBacking, MemorySink, shape, type Backing, type TestService } from '../support/harness.js';
import { adminEmail, adminPassword, boot, call, commandService, newKey, newPerson, newWorkspace, signIn } from './support.js';

const test = suite(`identity: sign-in, sessions, passwords (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: string;

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing, { config: { resetTtlSeconds: 2 } });
  admin = await signIn(svc.url, adminEmail, adminPassword);
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

const ttl = 30 * 24 * 3600;

test('sign in: 201 with an svcs_ token shown once, a 30-day expiry and an HttpOnly Strict cookie', async () => {
  const before = Date.now();
  const r = await call(svc.url, 'POST', '/sessions', { body: { email: 'ROOT@example.test ', password: adminPassword } });
  assert.is(r.status, 201);
  assert.match(r.body.token, /^svcs_[A-Za-z0-9_-]{43}$/);
  const expires = Date.parse(r.body.expires_at);
  assert.ok(expires >= before + ttl * 1000 - 1000 && expires <= Date.now() + ttl * 1000 + 1000);
  assert.equal(Object.keys(r.body.person).sort(), ['created_at', 'email', 'id', 'instance_admin', 'name', 'password_set', 'status']);
  assert.is(r.body.person.email, adminEmail);
  assert.is(r.body.person.instance_admin, true);
  assert.is(r.headers.get('set-cookie'), `svc_session=${r.body.token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${ttl}`);
  assert.is(r.headers.get('cache-control'), 'no-store');
});

test('GET /me with the token as bearer and as the svc_session cookie', async () => {
  const bearer = await call(svc.url, 'GET', '/me', { auth: admin });
  assert.is(bearer.status, 200);
  assert.is(bearer.body.via, 'session');
  assert.is(bearer.body.person.email, adminEmail);
  assert.is(bearer.body.workspace, null);
  const cookie = await call(svc.url, 'GET', '/me', { cookie: `theme=dark; svc_session=${admin}` });
  assert.is(cookie.status, 200);
  assert.is(cookie.body.person.id, bearer.body.person.id);
});

test('no credentials, a garbage token or an unknown session: 401 invalid_api_key', async () => {
  const none = await call(svc.url, 'GET', '/me');
  assert.is(none.status, 401);
  assert.is(none.body.error.code, 'invalid_api_key');
  for (const auth of ['nonsense', 'svcs_unknown-session-token', admin + 'x']) {
    const r = await call(svc.url, 'GET', '/me', { auth });
    assert.is(r.status, 401);
    assert.is(r.body.error.code, 'invalid_api_key');
    assert.is(r.body.error.type, 'authentication_error');
    assert.not.ok(r.text.includes(auth));
  }
  const basic = await fetch(`${svc.url}/admin/v1/me`, { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
  assert.is(basic.status, 401);
});

test('a stale svc_session cookie does not block the public routes; it is no sign-in elsewhere', async () => {
  const stale = 'svc_session=svcs_expired-or-signed-out';
  const r = await call(svc.url, 'POST', '/sessions', { cookie: stale, body: { email: adminEmail, password: adminPassword } });
  assert.is(r.status, 201);
  const me = await call(svc.url, 'GET', '/me', { cookie: stale });
  assert.is(me.status, 401);
  assert.is(me.body.error.code, 'invalid_api_key');
  const ws = await newWorkspace(svc.url, admin, 'cookie-ws');
  const key = await newKey(svc.url, admin, ws);
  assert.is((await call(svc.url, 'GET', '/me', { cookie: `svc_session=${key.key}` })).status, 401, 'keys go in the Authorization header only');
});

test('the endpoints are in the OpenAPI document', async () => {
  const doc = (await (await fetch(`${svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  for (const [path, method] of [
    ['/admin/v1/sessions', 'post'],
    ['/admin/v1/sessions/current', 'delete'],
    ['/admin/v1/me', 'get'],
    ['/admin/v1/me/password', 'post'],
    ['/admin/v1/password-reset', 'post'],
    ['/admin/v1/persons', 'post'],
    ['/admin/v1/persons/{personId}', 'patch'],
    ['/admin/v1/persons/{personId}/password-reset', 'post'],
    ['/admin/v1/workspaces', 'post'],
    ['/admin/v1/workspaces/{workspaceId}/members/{personId}', 'delete'],
    ['/admin/v1/workspaces/{workspaceId}/keys', 'post'],
    ['/admin/v1/workspaces/{workspaceId}/keys/{keyId}', 'delete'],
  ] as const) {
    assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
  }
});

test('wrong password and unknown email: the same 401, logged with ids only', async () => {
  const wrong = await call(svc.url, 'POST', '/sessions', { body: { email: adminEmail, password: 'not-the-password-1' } });
  const unknown = await call(svc.url, 'POST', '/sessions', { body: { email: 'nobody@example.test', password: 'not-the-password-1' } });
  for (const r of [wrong, unknown]) {
    assert.is(r.status, 401);
    assert.equal(r.body.error, { message: 'The email or password is wrong.', type: 'authentication_error', param: null, code: 'invalid_api_key' });
    assert.is(r.headers.get('set-cookie'), null);
  }
  const reasons = svc.logs.events('identity.sign_in_failed').map((e) => e.reason);
  assert.ok(reasons.includes('wrong_password') && reasons.includes('unknown_email'));
  assert.not.ok(svc.logs.text.includes('nobody@example.test'));
  assert.not.ok(svc.logs.text.includes('not-the-password-1'));
});

test('sign-in body is validated: 400 invalid_request naming the field', async () => {
  const r = await call(svc.url, 'POST', '/sessions', { body: { email: adminEmail } });
  assert.is(r.status, 400);
  assert.is(r.body.error.code, 'invalid_request');
  assert.is(r.body.error.param, 'password');
});

test('sign out: 204, the cookie is cleared and the token stops working; a key cannot sign out', async () => {
  const token = await signIn(svc.url, adminEmail, adminPassword);
  const out = await call(svc.url, 'DELETE', '/sessions/current', { auth: token });
  assert.is(out.status, 204);
  assert.match(out.headers.get('set-cookie') ?? '', /^svc_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
  assert.is((await call(svc.url, 'GET', '/me', { auth: token })).status, 401);
  assert.is((await call(svc.url, 'GET', '/me', { auth: admin })).status, 200);
  const ws = await newWorkspace(svc.url, admin, 'signout-ws');
  const key = await newKey(svc.url, admin, ws);
  const byKey = await call(svc.url, 'DELETE', '/sessions/current', { auth: key.key });
  assert.is(byKey.status, 403);
  assert.is(byKey.body.error.code, 'forbidden');
});

test('change password: needs the current one, minimum length, ends the other sessions only', async () => {
  const p = await newPerson(svc.url, admin, 'changer@example.test', 'first-password-1');
  const other = await signIn(svc.url, 'changer@example.test', 'first-password-1');
  const wrong = await call(svc.url, 'POST', '/me/password', { auth: p.token, body: { current_password: 'nope-nope-nope', new_password: 'second-password-2' } });
  assert.is(wrong.status, 400);
  assert.is(wrong.body.error.param, 'current_password');
  const short = await call(svc.url, 'POST', '/me/password', { auth: p.token, body: { current_password: 'first-password-1', new_password: 'short' } });
  assert.is(short.status, 400);
  assert.is(short.body.error.param, 'new_password');
  const ok = await call(svc.url, 'POST', '/me/password', { auth: p.token, body: { current_password: 'first-password-1', new_password: 'second-password-2' } });
  assert.is(ok.status, 204);
  assert.is((await call(svc.url, 'GET', '/me', { auth: p.token })).status, 200);
  assert.is((await call(svc.url, 'GET', '/me', { auth: other })).status, 401);
  assert.is((await call(svc.url, 'POST', '/sessions', { body: { email: 'changer@example.test', password: 'first-password-1' } })).status, 401);
  await signIn(svc.url, 'changer@example.test', 'second-password-2');
});

test('password reset link: instance admins only, one-time, ends sessions, short-lived', async () => {
  const p = await newPerson(svc.url, admin, 'forgetful@example.test', 'forgotten-password-1');
  const denied = await call(svc.url, 'POST', `/persons/${p.id}/password-reset`, { auth: p.token });
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'forbidden');
  const link = await call(svc.url, 'POST', `/persons/${p.id}/password-reset`, { auth: admin });
  assert.is(link.status, 201);
  assert.match(link.body.token, /^svcr_[A-Za-z0-9_-]{43}$/);
  assert.is(link.body.person_id, p.id);
  assert.ok(Math.abs(Date.parse(link.body.expires_at) - (Date.now() + 2000)) < 1500);
  const short = await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: 'short' } });
  assert.is(short.status, 400);
  assert.is(short.body.error.param, 'password');
  const bad = await call(svc.url, 'POST', '/password-reset', { body: { token: 'svcr_wrong', password: 'brand-new-password-1' } });
  assert.is(bad.status, 400);
  assert.is(bad.body.error.param, 'token');
  const used = await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: 'brand-new-password-1' } });
  assert.is(used.status, 204);
  assert.is((await call(svc.url, 'GET', '/me', { auth: p.token })).status, 401);
  const again = await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: 'another-password-1' } });
  assert.is(again.status, 400);
  assert.is(again.body.error.param, 'token');
  await signIn(svc.url, 'forgetful@example.test', 'brand-new-password-1');
});

test('an expired reset link is refused and kept for the retention job (expires_at stored)', async () => {
  const p = await newPerson(svc.url, admin, 'late@example.test', 'late-password-123');
  const link = await call(svc.url, 'POST', `/persons/${p.id}/password-reset`, { auth: admin });
  await new Promise((r) => setTimeout(r, 2100));
  const r = await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: 'too-late-password-1' } });
  assert.is(r.status, 400);
  assert.is(r.body.error.param, 'token');
  const rows = await svc.service.get(StoreToken).execute<{ expires_at: unknown }>('select expires_at from identity_password_resets where person_id = ?', [p.id]);
  assert.is(rows.length, 1);
  assert.ok(Number(rows[0]!.expires_at) < Date.now());
});

test('a session expires after sessionTtlSeconds', async () => {
  const b = await createBacking();
  const s = await boot(b, { config: { sessionTtlSeconds: 1 } });
  try {
    const r = await call(s.url, 'POST', '/sessions', { body: { email: adminEmail, password: adminPassword } });
    assert.match(r.headers.get('set-cookie') ?? '', /Max-Age=1$/);
    assert.is((await call(s.url, 'GET', '/me', { auth: r.body.token })).status, 200);
    await new Promise((done) => setTimeout(done, 1100));
    assert.is((await call(s.url, 'GET', '/me', { auth: r.body.token })).status, 401);
  } finally {
    await s.stop();
    await b.drop();
  }
});

test('SVC_ADMIN_* create the first admin only while the instance has none', async () => {
  const second = await boot(backing, { env: { SVC_ADMIN_EMAIL: 'second-root@example.test', SVC_ADMIN_PASSWORD: 'second-root-password' } });
  try {
    const persons = await call(svc.url, 'GET', '/persons', { auth: admin });
    assert.not.ok(persons.text.includes('second-root@example.test'));
    assert.is((await call(second.url, 'POST', '/sessions', { body: { email: 'second-root@example.test', password: 'second-root-password' } })).status, 401);
    const created = svc.logs.events('identity.audit').filter((e) => e.action === 'admin_bootstrapped');
    assert.is(created.length, 1);
  } finally {
    await second.stop();
  }
});

test('SVC_ADMIN_PASSWORD below the minimum stops start-up with a message naming the variable, not the value', async () => {
  const b = await createBacking();
  try {
    const logs = new MemorySink();
    const s = commandService(b, logs, { SVC_ADMIN_EMAIL: 'x@example.test', SVC_ADMIN_PASSWORD: 'tiny-pw' });
    let message = '';
    await s.start().catch((err: Error) => (message = err.message));
    await s.stop();
    assert.match(message, /SVC_ADMIN_PASSWORD must be at least 10 characters/);
    assert.not.ok(message.includes('tiny-pw'));
    assert.not.ok(logs.text.includes('tiny-pw'));
  } finally {
    await b.drop();
  }
});

test.run();
