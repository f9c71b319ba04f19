import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { addMember, adminEmail, adminPassword, boot, call, newKey, newPerson, newWorkspace, signIn } from './support.js';

const test = suite(`identity: workspaces and members (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: string;
/** Workspace A: `lead` is its admin, `bob` a member. Workspace B: `carol` only. */
let a: string;
let b: string;
let lead: { id: string; token: string };
let bob: { id: string; token: string };
let carol: { id: string; token: string };

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing);
  admin = await signIn(svc.url, adminEmail, adminPassword);
  lead = await newPerson(svc.url, admin, 'lead@example.test');
  bob = await newPerson(svc.url, admin, 'bob@example.test');
  carol = await newPerson(svc.url, admin, 'carol@example.test');
  a = await newWorkspace(svc.url, admin, 'Alpha');
  b = await newWorkspace(svc.url, admin, 'Beta');
  await addMember(svc.url, admin, a, 'lead@example.test', 'admin');
  await addMember(svc.url, lead.token, a, 'bob@example.test');
  await addMember(svc.url, admin, b, 'carol@example.test');
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('instance admins create workspaces and become their admin; others get 403', async () => {
  const r = await call(svc.url, 'POST', '/workspaces', { auth: admin, body: { name: 'Gamma' } });
  assert.is(r.status, 201);
  assert.match(r.body.id, /^ws_/);
  assert.is(r.body.name, 'Gamma');
  assert.is(r.body.role, 'admin');
  const members = await call(svc.url, 'GET', `/workspaces/${r.body.id}/members`, { auth: admin });
  assert.equal(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role]), [[adminEmail, 'admin']]);
  const denied = await call(svc.url, 'POST', '/workspaces', { auth: lead.token, body: { name: 'Nope' } });
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'forbidden');
  const blank = await call(svc.url, 'POST', '/workspaces', { auth: admin, body: { name: ' ' } });
  assert.is(blank.status, 400);
  assert.is(blank.body.error.param, 'name');
});

test('workspace names are unique ignoring case: create and rename to a taken name are 400 name; keeping its own name is fine', async () => {
  const dup = await call(svc.url, 'POST', '/workspaces', { auth: admin, body: { name: ' beta ' } });
  assert.is(dup.status, 400);
  assert.equal(dup.body.error, { message: 'A workspace named “beta” already exists; choose another name.', type: 'invalid_request_error', param: 'name', code: 'invalid_request' });
  const rename = await call(svc.url, 'PATCH', `/workspaces/${a}`, { auth: admin, body: { name: 'BETA' } });
  assert.is(rename.status, 400);
  assert.is(rename.body.error.param, 'name');
  assert.is(rename.body.error.message, 'A workspace named “BETA” already exists; choose another name.');
  const same = await call(svc.url, 'PATCH', `/workspaces/${b}`, { auth: admin, body: { name: 'Beta' } });
  assert.is(same.status, 200);
  const all = await call(svc.url, 'GET', '/workspaces?scope=all', { auth: admin });
  assert.is(all.body.data.filter((w: { name: string }) => w.name.toLowerCase() === 'beta').length, 1);
});

test('list mine: only active memberships; scope=all for instance admins only', async () => {
  const mine = await call(svc.url, 'GET', '/workspaces', { auth: bob.token });
  assert.equal(mine.body.data.map((w: { id: string; role: string }) => [w.id, w.role]), [[a, 'member']]);
  const all = await call(svc.url, 'GET', '/workspaces?scope=all', { auth: admin });
  assert.ok([a, b].every((id) => all.body.data.some((w: { id: string }) => w.id === id)));
  const denied = await call(svc.url, 'GET', '/workspaces?scope=all', { auth: bob.token });
  assert.is(denied.status, 403);
  const bad = await call(svc.url, 'GET', '/workspaces?scope=everything', { auth: bob.token });
  assert.is(bad.status, 400);
  assert.is(bad.body.error.param, 'scope');
});

test('rename: workspace admins only; a member gets 403, an outsider 404', async () => {
  const ok = await call(svc.url, 'PATCH', `/workspaces/${a}`, { auth: lead.token, body: { name: 'Alpha Team' } });
  assert.is(ok.status, 200);
  assert.is(ok.body.name, 'Alpha Team');
  assert.is((await call(svc.url, 'GET', `/workspaces/${a}`, { auth: bob.token })).body.name, 'Alpha Team');
  const member = await call(svc.url, 'PATCH', `/workspaces/${a}`, { auth: bob.token, body: { name: 'Bob’s' } });
  assert.is(member.status, 403);
  assert.is(member.body.error.code, 'forbidden');
  const outsider = await call(svc.url, 'PATCH', `/workspaces/${a}`, { auth: carol.token, body: { name: 'Carol’s' } });
  assert.is(outsider.status, 404);
  assert.is(outsider.body.error.code, 'not_found');
  const missing = await call(svc.url, 'GET', '/workspaces/ws_nope', { auth: admin });
  assert.is(missing.status, 404);
});

test('members never see another workspace or its members (404 not_found)', async () => {
  const own = await call(svc.url, 'GET', `/workspaces/${a}/members`, { auth: bob.token });
  assert.is(own.status, 200);
  assert.equal(own.body.data.map((m: { email: string }) => m.email).sort(), ['bob@example.test', 'lead@example.test', adminEmail].sort());
  for (const path of [`/workspaces/${b}`, `/workspaces/${b}/members`, `/workspaces/${b}/keys`]) {
    const r = await call(svc.url, 'GET', path, { auth: bob.token });
    assert.is(r.status, 404, path);
    assert.is(r.body.error.code, 'not_found');
    assert.not.ok(r.text.includes('carol'));
  }
});

test('add a member by email: the person must exist; duplicates and bad emails are 400 email', async () => {
  await newPerson(svc.url, admin, 'dave@example.test');
  const r = await call(svc.url, 'POST', `/workspaces/${a}/members`, { auth: lead.token, body: { email: 'DAVE@example.test' } });
  assert.is(r.status, 201);
  assert.equal({ ...r.body, person_id: 0, created_at: 0 }, { person_id: 0, email: 'dave@example.test', name: null, role: 'member', status: 'active', created_at: 0 });
  for (const email of ['dave@example.test', 'ghost@example.test', 'not an email']) {
    const bad = await call(svc.url, 'POST', `/workspaces/${a}/members`, { auth: lead.token, body: { email } });
    assert.is(bad.status, 400, email);
    assert.is(bad.body.error.param, 'email');
  }
  const byMember = await call(svc.url, 'POST', `/workspaces/${a}/members`, { auth: bob.token, body: { email: 'carol@example.test' } });
  assert.is(byMember.status, 403);
});

test('change role: a promoted member may rename; the last active admin cannot be demoted, suspended or removed', async () => {
  const up = await call(svc.url, 'PATCH', `/workspaces/${b}/members/${carol.id}`, { auth: admin, body: { role: 'admin' } });
  assert.is(up.status, 200);
  assert.is(up.body.role, 'admin');
  assert.is((await call(svc.url, 'PATCH', `/workspaces/${b}`, { auth: carol.token, body: { name: 'Beta!' } })).status, 200);
  const adminId = (await call(svc.url, 'GET', '/me', { auth: admin })).body.person.id;
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${b}/members/${adminId}`, { auth: carol.token })).status, 204);
  const demote = await call(svc.url, 'PATCH', `/workspaces/${b}/members/${carol.id}`, { auth: carol.token, body: { role: 'member' } });
  assert.is(demote.status, 400);
  assert.is(demote.body.error.param, 'role');
  const suspend = await call(svc.url, 'PATCH', `/workspaces/${b}/members/${carol.id}`, { auth: carol.token, body: { status: 'suspended' } });
  assert.is(suspend.status, 400);
  assert.is(suspend.body.error.param, 'status');
  const remove = await call(svc.url, 'DELETE', `/workspaces/${b}/members/${carol.id}`, { auth: carol.token });
  assert.is(remove.status, 400);
  const missing = await call(svc.url, 'PATCH', `/workspaces/${b}/members/per_nope`, { auth: carol.token, body: { role: 'member' } });
  assert.is(missing.status, 404);
  assert.is(missing.body.error.param, 'personId');
});

test('suspend a member in a workspace: the workspace disappears for them; reinstate brings it back', async () => {
  const s = await call(svc.url, 'PATCH', `/workspaces/${a}/members/${bob.id}`, { auth: lead.token, body: { status: 'suspended' } });
  assert.is(s.status, 200);
  assert.is(s.body.status, 'suspended');
  assert.is((await call(svc.url, 'GET', `/workspaces/${a}`, { auth: bob.token })).status, 404);
  assert.equal((await call(svc.url, 'GET', '/workspaces', { auth: bob.token })).body.data, []);
  assert.is((await call(svc.url, 'GET', '/me', { auth: bob.token })).status, 200, 'still signed in instance-wide');
  const back = await call(svc.url, 'PATCH', `/workspaces/${a}/members/${bob.id}`, { auth: lead.token, body: { status: 'active' } });
  assert.is(back.body.status, 'active');
  assert.is((await call(svc.url, 'GET', `/workspaces/${a}`, { auth: bob.token })).status, 200);
});

test('remove a member: their keys there are revoked for good, also after being added back', async () => {
  const erin = await newPerson(svc.url, admin, 'erin@example.test');
  await addMember(svc.url, lead.token, a, 'erin@example.test');
  const key = await newKey(svc.url, erin.token, a);
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/members/${erin.id}`, { auth: lead.token })).status, 204);
  assert.is((await call(svc.url, 'GET', `/workspaces/${a}`, { auth: erin.token })).status, 404);
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 401);
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/members/${erin.id}`, { auth: lead.token })).status, 404);
  await addMember(svc.url, lead.token, a, 'erin@example.test');
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 401);
  const keys = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: erin.token });
  assert.ok(keys.body.data[0].revoked_at);
});

test('a key acts only in its own workspace', async () => {
  const key = await newKey(svc.url, admin, a);
  assert.is((await call(svc.url, 'GET', `/workspaces/${a}/members`, { auth: key.key })).status, 200);
  const other = await call(svc.url, 'GET', `/workspaces/${b}/members`, { auth: key.key });
  assert.is(other.status, 404);
  const list = await call(svc.url, 'GET', '/workspaces', { auth: key.key });
  assert.equal(list.body.data.map((w: { id: string }) => w.id), [a]);
});

test.run();
