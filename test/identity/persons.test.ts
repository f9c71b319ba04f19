import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { addMember, adminEmail, adminPassword, boot, call, newKey, newPerson, newWorkspace, signIn } from './support.js';

const test = suite(`identity: persons (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: string;
let adminId: string;

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing);
  admin = await signIn(svc.url, adminEmail, adminPassword);
  adminId = (await call(svc.url, 'GET', '/me', { auth: admin })).body.person.id;
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('instance admins create and list persons; the view never holds a password', async () => {
  const r = await call(svc.url, 'POST', '/persons', { auth: admin, body: { email: 'Ann@Example.test', name: ' Ann ', password: 'ann-password-123' } });
  assert.is(r.status, 201);
  assert.match(r.body.id, /^per_/);
  assert.equal({ ...r.body, id: 0, created_at: 0 }, { id: 0, email: 'ann@example.test', name: 'Ann', instance_admin: false, status: 'active', password_set: true, created_at: 0 });
  const list = await call(svc.url, 'GET', '/persons', { auth: admin });
  assert.is(list.status, 200);
  assert.equal(list.body.data.map((p: { email: string }) => p.email), [adminEmail, 'ann@example.test']);
  assert.not.ok(list.text.includes('ann-password-123'));
  assert.not.ok(/hash|scrypt/.test(list.text));
  const one = await call(svc.url, 'GET', `/persons/${r.body.id}`, { auth: admin });
  assert.equal(one.body, r.body);
});

test('only instance admins signed in as persons manage persons', async () => {
  const m = await newPerson(svc.url, admin, 'plain@example.test');
  const ws = await newWorkspace(svc.url, admin, 'persons-ws');
  const adminKey = await newKey(svc.url, admin, ws);
  for (const auth of [m.token, adminKey.key]) {
    for (const [method, path, body] of [['GET', '/persons'], ['POST', '/persons', { email: 'x@example.test' }], ['GET', `/persons/${m.id}`], ['PATCH', `/persons/${m.id}`, { status: 'suspended' }]] as const) {
      const r = await call(svc.url, method, path, { auth, body });
      assert.is(r.status, 403, `${method} ${path}`);
      assert.is(r.body.error.code, 'forbidden');
    }
  }
  const anonymous = await call(svc.url, 'GET', '/persons');
  assert.is(anonymous.status, 401);
  assert.is(anonymous.body.error.code, 'invalid_api_key');
});

test('validation: email shape, duplicate email (any case), password length, name, unknown person', async () => {
  const cases: Array<[unknown, string]> = [
    [{ email: 'not-an-email' }, 'email'],
    [{ email: 'a b@example.test' }, 'email'],
    [{ email: 'ANN@example.test' }, 'email'],
    [{ email: adminEmail }, 'email'],
    [{ email: 'short@example.test', password: 'short' }, 'password'],
    [{ email: 'blank@example.test', name: '   ' }, 'name'],
    [{ name: 'no email' }, 'email'],
  ];
  for (const [body, param] of cases) {
    const r = await call(svc.url, 'POST', '/persons', { auth: admin, body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error.code, 'invalid_request');
    assert.is(r.body.error.param, param, JSON.stringify(body));
  }
  const notObject = await call(svc.url, 'POST', '/persons', { auth: admin, body: ['x'] });
  assert.is(notObject.status, 400);
  const missing = await call(svc.url, 'GET', '/persons/per_nope', { auth: admin });
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'not_found');
});

test('a person created without a password cannot sign in until a reset link (default 1 h) sets one', async () => {
  const r = await call(svc.url, 'POST', '/persons', { auth: admin, body: { email: 'nopw@example.test' } });
  assert.is(r.status, 201);
  assert.is(r.body.password_set, false);
  assert.is((await call(svc.url, 'POST', '/sessions', { body: { email: 'nopw@example.test', password: 'anything-at-all' } })).status, 401);
  const link = await call(svc.url, 'POST', `/persons/${r.body.id}/password-reset`, { auth: admin });
  assert.ok(Math.abs(Date.parse(link.body.expires_at) - (Date.now() + 3600_000)) < 5000);
  assert.is((await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: 'now-i-have-one' } })).status, 204);
  await signIn(svc.url, 'nopw@example.test', 'now-i-have-one');
  assert.is((await call(svc.url, 'GET', `/persons/${r.body.id}`, { auth: admin })).body.password_set, true);
  assert.is((await call(svc.url, 'POST', '/persons/per_nope/password-reset', { auth: admin })).status, 404);
});

test('suspend instance-wide: sessions end, sign-in and keys refused; reinstate restores sign-in and keys', async () => {
  const p = await newPerson(svc.url, admin, 'suspendme@example.test', 'suspend-me-please');
  const ws = await newWorkspace(svc.url, admin, 'suspend-ws');
  await addMember(svc.url, admin, ws, 'suspendme@example.test');
  const key = await newKey(svc.url, p.token, ws);
  const s = await call(svc.url, 'PATCH', `/persons/${p.id}`, { auth: admin, body: { status: 'suspended' } });
  assert.is(s.status, 200);
  assert.is(s.body.status, 'suspended');
  assert.is((await call(svc.url, 'GET', '/me', { auth: p.token })).status, 401);
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 401);
  assert.is((await call(svc.url, 'POST', '/sessions', { body: { email: 'suspendme@example.test', password: 'suspend-me-please' } })).status, 401);
  const back = await call(svc.url, 'PATCH', `/persons/${p.id}`, { auth: admin, body: { status: 'active' } });
  assert.is(back.body.status, 'active');
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  assert.is((await call(svc.url, 'GET', '/me', { auth: p.token })).status, 401, 'suspension ended the old sessions for good');
  await signIn(svc.url, 'suspendme@example.test', 'suspend-me-please');
});

test('an instance admin cannot suspend themselves or drop their own admin flag; can promote others', async () => {
  const self = await call(svc.url, 'PATCH', `/persons/${adminId}`, { auth: admin, body: { status: 'suspended' } });
  assert.is(self.status, 400);
  assert.is(self.body.error.param, 'status');
  const flag = await call(svc.url, 'PATCH', `/persons/${adminId}`, { auth: admin, body: { instance_admin: false } });
  assert.is(flag.status, 400);
  assert.is(flag.body.error.param, 'instance_admin');
  const p = await newPerson(svc.url, admin, 'promoted@example.test');
  assert.is((await call(svc.url, 'GET', '/persons', { auth: p.token })).status, 403);
  const up = await call(svc.url, 'PATCH', `/persons/${p.id}`, { auth: admin, body: { instance_admin: true, name: 'Pro Moted' } });
  assert.is(up.body.instance_admin, true);
  assert.is(up.body.name, 'Pro Moted');
  assert.is((await call(svc.url, 'GET', '/persons', { auth: p.token })).status, 200);
  const badStatus = await call(svc.url, 'PATCH', `/persons/${p.id}`, { auth: admin, body: { status: 'gone' } });
  assert.is(badStatus.status, 400);
  assert.is(badStatus.body.error.param, 'status');
});

test.run();
