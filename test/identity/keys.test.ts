import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { IdentityToken, isGatewayError, StoreToken, type IdentityService } from '../../kernel/index.js';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { addMember, adminEmail, adminPassword, boot, call, newKey, newPerson, newWorkspace, signIn } from './support.js';

const test = suite(`identity: API keys and authenticate() (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: string;
let a: string;
let b: string;
let lead: { id: string; token: string };
let bob: { id: string; token: string };

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing);
  admin = await signIn(svc.url, adminEmail, adminPassword);
  lead = await newPerson(svc.url, admin, 'lead@example.test');
  bob = await newPerson(svc.url, admin, 'bob@example.test');
  a = await newWorkspace(svc.url, admin, 'Alpha');
  b = await newWorkspace(svc.url, admin, 'Beta');
  await addMember(svc.url, admin, a, 'lead@example.test', 'admin');
  await addMember(svc.url, admin, a, 'bob@example.test');
  await addMember(svc.url, admin, b, 'bob@example.test');
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

/** The GatewayError code `fn` throws, or 'none'. */
function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'none';
  } catch (err) {
    return isGatewayError(err) ? `${err.status} ${err.code} ${err.param ?? ''}`.trim() : String(err);
  }
}

/** Asserts the 401 invalid_api_key of SPEC.md Authentication 3 without the key in the body. */
async function refused(key: string, why: string): Promise<void> {
  const r = await call(svc.url, 'GET', '/me', { auth: key });
  assert.is(r.status, 401, why);
  assert.is(r.body.error.code, 'invalid_api_key', why);
  assert.not.ok(r.text.includes(key), why);
  assert.not.ok(r.text.includes(key.slice(4, 20)), why);
}

test('create: svc_ + 43 base64url chars (256 bits), shown once; list shows a short prefix only', async () => {
  const r = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: bob.token, body: { name: 'laptop' } });
  assert.is(r.status, 201);
  assert.match(r.body.key, /^svc_[A-Za-z0-9_-]{43}$/);
  assert.is(Buffer.from(r.body.key.slice(4), 'base64url').length, 32);
  assert.is(r.body.prefix, r.body.key.slice(0, 8));
  assert.equal({ ...r.body, id: 0, key: 0, prefix: 0, created_at: 0 }, { id: 0, key: 0, prefix: 0, name: 'laptop', workspace_id: a, person_id: bob.id, created_at: 0, last_used_at: null, revoked_at: null });
  const list = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: bob.token });
  assert.not.ok(list.text.includes(r.body.key));
  assert.is(list.body.data[0].key, undefined);
  const me = await call(svc.url, 'GET', '/me', { auth: r.body.key });
  assert.is(me.status, 200);
  assert.is(me.body.via, 'key');
  assert.is(me.body.person.id, bob.id);
  assert.equal([me.body.workspace.id, me.body.workspace.role], [a, 'member']);
  assert.equal(me.body.workspaces.map((w: { id: string }) => w.id), [a]);
  const blank = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: bob.token, body: {} });
  assert.is(blank.status, 400);
  assert.is(blank.body.error.param, 'name');
});

test('key names are unique among a person’s active keys in the workspace (ignoring case); a revoked key frees its name; another person may use it', async () => {
  const first = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: bob.token, body: { name: 'ci runner' } });
  assert.is(first.status, 201);
  const dup = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: bob.token, body: { name: 'CI Runner' } });
  assert.is(dup.status, 400);
  assert.equal(dup.body.error, { message: 'You already have an active key named “CI Runner” in this workspace; choose another name or revoke that key first.', type: 'invalid_request_error', param: 'name', code: 'invalid_request' });
  const lead = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: admin, body: { name: 'ci runner' } });
  assert.is(lead.status, 201, 'another person’s key may have the same name');
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${lead.body.id}`, { auth: admin })).status, 204);
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${first.body.id}`, { auth: bob.token })).status, 204);
  const again = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: bob.token, body: { name: 'ci runner' } });
  assert.is(again.status, 201);
});

test('keys are made by a signed-in member: not by a key, not outside the workspace', async () => {
  const key = await newKey(svc.url, bob.token, a);
  const byKey = await call(svc.url, 'POST', `/workspaces/${a}/keys`, { auth: key.key, body: { name: 'child' } });
  assert.is(byKey.status, 403);
  const outsider = await call(svc.url, 'POST', `/workspaces/${b}/keys`, { auth: lead.token, body: { name: 'x' } });
  assert.is(outsider.status, 404);
  const c = await newWorkspace(svc.url, admin, 'Gamma');
  const adminId = (await call(svc.url, 'GET', '/me', { auth: admin })).body.person.id;
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${c}/members/${adminId}`, { auth: admin })).status, 400, 'last admin stays');
  const ghost = await call(svc.url, 'POST', '/workspaces/ws_nope/keys', { auth: admin, body: { name: 'x' } });
  assert.is(ghost.status, 404);
});

test('list: a member sees their own keys, a workspace admin all of them, nobody another workspace’s', async () => {
  const mine = await newKey(svc.url, bob.token, a, 'bob-a');
  const leads = await newKey(svc.url, lead.token, a, 'lead-a');
  const bobB = await newKey(svc.url, bob.token, b, 'bob-b');
  const asBob = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: bob.token });
  assert.ok(asBob.body.data.every((k: { person_id: string }) => k.person_id === bob.id));
  assert.ok(asBob.body.data.some((k: { id: string }) => k.id === mine.id));
  assert.not.ok(asBob.body.data.some((k: { id: string }) => k.id === bobB.id));
  const asLead = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: lead.token });
  const ids = asLead.body.data.map((k: { id: string }) => k.id);
  assert.ok(ids.includes(mine.id) && ids.includes(leads.id));
  assert.not.ok(ids.includes(bobB.id));
  const other = await call(svc.url, 'GET', `/workspaces/${b}/keys`, { auth: lead.token });
  assert.is(other.status, 404);
  assert.is(other.body.error.code, 'not_found');
  const viaKey = await call(svc.url, 'GET', `/workspaces/${b}/keys`, { auth: mine.key });
  assert.is(viaKey.status, 404, 'a key of workspace A sees nothing of B');
});

test('revoke: own key or, for admins, any; others’ keys are 404 to a member; refused at once', async () => {
  const own = await newKey(svc.url, bob.token, a);
  const leads = await newKey(svc.url, lead.token, a);
  const notMine = await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${leads.id}`, { auth: bob.token });
  assert.is(notMine.status, 404);
  assert.is(notMine.body.error.code, 'not_found');
  const wrongWs = await call(svc.url, 'DELETE', `/workspaces/${b}/keys/${own.id}`, { auth: bob.token });
  assert.is(wrongWs.status, 404);
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${own.id}`, { auth: bob.token })).status, 204);
  await refused(own.key, 'revoked by its owner');
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${own.id}`, { auth: bob.token })).status, 204, 'idempotent');
  const bobs = await newKey(svc.url, bob.token, a);
  assert.is((await call(svc.url, 'DELETE', `/workspaces/${a}/keys/${bobs.id}`, { auth: lead.token })).status, 204);
  await refused(bobs.key, 'revoked by a workspace admin');
  const listed = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: bob.token });
  assert.ok(listed.body.data.find((k: { id: string }) => k.id === own.id).revoked_at);
});

test('401 invalid_api_key: wrong key, owner suspended instance-wide, suspended in the workspace, removed', async () => {
  await refused('svc_' + 'A'.repeat(43), 'wrong key');
  await refused('svc_short', 'malformed key');
  const frank = await newPerson(svc.url, admin, 'frank@example.test');
  await addMember(svc.url, admin, a, 'frank@example.test');
  const key = await newKey(svc.url, frank.token, a);
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  await call(svc.url, 'PATCH', `/persons/${frank.id}`, { auth: admin, body: { status: 'suspended' } });
  await refused(key.key, 'owner suspended instance-wide');
  await call(svc.url, 'PATCH', `/persons/${frank.id}`, { auth: admin, body: { status: 'active' } });
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  await call(svc.url, 'PATCH', `/workspaces/${a}/members/${frank.id}`, { auth: lead.token, body: { status: 'suspended' } });
  await refused(key.key, 'owner suspended in the workspace');
  await call(svc.url, 'PATCH', `/workspaces/${a}/members/${frank.id}`, { auth: lead.token, body: { status: 'active' } });
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  await call(svc.url, 'DELETE', `/workspaces/${a}/members/${frank.id}`, { auth: lead.token });
  await refused(key.key, 'owner removed from the workspace');
});

test('authenticate(): a key uses its own workspace whatever x-svc-workspace says', async () => {
  const identity: IdentityService = svc.service.get(IdentityToken);
  const key = await newKey(svc.url, bob.token, b);
  const p = identity.authenticate({ authorization: `Bearer ${key.key}`, 'x-svc-workspace': a });
  assert.equal(p, { personId: bob.id, workspaceId: b, keyId: key.id, workspaceRole: 'member', instanceAdmin: false, via: 'key' });
  assert.is(codeOf(() => identity.authenticate({})), '401 invalid_api_key');
  assert.is(codeOf(() => identity.authenticate({ authorization: 'Bearer svc_wrong' })), '401 invalid_api_key');
});

test('authenticate(): workspace selection for a person signed in with a session', async () => {
  const identity: IdentityService = svc.service.get(IdentityToken);
  const auth = (token: string, ws?: string) => ({ authorization: `Bearer ${token}`, ...(ws ? { 'x-svc-workspace': ws } : {}) });
  const single = identity.authenticate(auth(lead.token));
  assert.equal(single, { personId: lead.id, workspaceId: a, keyId: null, workspaceRole: 'admin', instanceAdmin: false, via: 'session' });
  assert.is(codeOf(() => identity.authenticate(auth(bob.token))), '400 invalid_request x-svc-workspace');
  assert.is(identity.authenticate(auth(bob.token, b)).workspaceId, b);
  assert.is(identity.authenticate({ cookie: `svc_session=${bob.token}`, 'x-svc-workspace': a }).workspaceId, a);
  assert.is(codeOf(() => identity.authenticate(auth(lead.token, b))), '404 not_found x-svc-workspace');
  assert.is(codeOf(() => identity.authenticate(auth(bob.token, 'ws_nope'))), '404 not_found x-svc-workspace');
  await call(svc.url, 'PATCH', `/workspaces/${b}/members/${bob.id}`, { auth: admin, body: { status: 'suspended' } });
  assert.is(codeOf(() => identity.authenticate(auth(bob.token, b))), '404 not_found x-svc-workspace');
  assert.is(identity.authenticate(auth(bob.token)).workspaceId, a, 'one active membership left: the default');
  await call(svc.url, 'PATCH', `/workspaces/${b}/members/${bob.id}`, { auth: admin, body: { status: 'active' } });
  const loner = await newPerson(svc.url, admin, 'loner@example.test');
  assert.is(codeOf(() => identity.authenticate(auth(loner.token))), '404 not_found x-svc-workspace');
  assert.is(identity.roleIn(lead.id, a), 'admin');
  assert.is(identity.roleIn(lead.id, b), null);
});

test('last_used_at: shown at once, written behind the request in a batch (at stop at the latest)', async () => {
  const key = await newKey(svc.url, bob.token, a, 'tracked');
  assert.is((await call(svc.url, 'GET', '/me', { auth: key.key })).status, 200);
  const listed = await call(svc.url, 'GET', `/workspaces/${a}/keys`, { auth: bob.token });
  const row = listed.body.data.find((k: { id: string }) => k.id === key.id);
  assert.ok(Math.abs(Date.parse(row.last_used_at) - Date.now()) < 5000);
  const stored = await svc.service.get(StoreToken).execute<{ last_used_at: unknown }>('select last_used_at from identity_api_keys where id = ?', [key.id]);
  assert.is(stored[0]!.last_used_at, null, 'no database write on the request path');
  await svc.stop();
  svc = await boot(backing);
  const after = await svc.service.get(StoreToken).execute<{ last_used_at: unknown }>('select last_used_at from identity_api_keys where id = ?', [key.id]);
  assert.is(new Date(Number(after[0]!.last_used_at)).toISOString(), row.last_used_at);
});

test.run();
