import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CacheToken, StoreToken } from '../../kernel/index.js';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { addMember, adminEmail, adminPassword, boot, call, newKey, newPerson, newWorkspace, signIn, within } from './support.js';

const test = suite(`identity: changes reach every replica (${shape})`);
let backing: Backing;
let one: TestService;
let two: TestService | undefined;
let admin: string;
let ws: string;

test.before(async () => {
  backing = await createBacking();
  one = await boot(backing, { config: { reloadIntervalMs: 1000 } });
  // Embedded: each in-process memory cache is separate, so a second replica cannot hear changes.
  // Replica two keeps the 30 s safety net, so only change messages can bring it up to date in time.
  if (shape === 'scale-out') two = await boot(backing);
  admin = await signIn(one.url, adminEmail, adminPassword);
  ws = await newWorkspace(one.url, admin, 'Shared');
});
test.after(async () => {
  await two?.stop();
  await one.stop();
  await backing.drop();
});

const status = async (url: string, token: string): Promise<number> => (await call(url, 'GET', '/me', { auth: token })).status;

test('every write publishes identity.changed on the cache', async () => {
  const seen: string[] = [];
  const off = await one.service.get(CacheToken).subscribe('identity.changed', (m) => seen.push(m));
  try {
    await newPerson(one.url, admin, 'listener@example.test');
    assert.ok((await within(1000, async () => seen.length > 0)) >= 0);
  } finally {
    await off();
  }
});

test('the periodic reload catches a change that sent no message (safety net)', async () => {
  const p = await newPerson(one.url, admin, 'quiet@example.test');
  await addMember(one.url, admin, ws, 'quiet@example.test');
  const key = await newKey(one.url, p.token, ws);
  assert.is(await status(one.url, key.key), 200);
  await one.service.get(StoreToken).execute('update identity_api_keys set revoked_at = ? where id = ?', [Date.now(), key.id]);
  assert.ok((await within(2500, async () => (await status(one.url, key.key)) === 401)) >= 0);
});

if (shape === 'scale-out') {
  test('Redis down at start: the service still starts and signs people in from the database', async () => {
    const b = await createBacking('scale-out');
    const s = await boot({ ...b, redisUrl: 'redis://127.0.0.1:6390' });
    try {
      const token = await signIn(s.url, adminEmail, adminPassword);
      assert.is(await status(s.url, token), 200);
    } finally {
      await s.stop();
      await b.drop();
    }
  });

  test('a session and a key made on one replica work on the other', async () => {
    const p = await newPerson(one.url, admin, 'roamer@example.test');
    await addMember(one.url, admin, ws, 'roamer@example.test');
    const key = await newKey(one.url, p.token, ws);
    assert.ok((await within(1000, async () => (await status(two!.url, p.token)) === 200)) >= 0);
    assert.ok((await within(1000, async () => (await status(two!.url, key.key)) === 200)) >= 0);
  });

  test('a key revoked through one replica is refused by the other within 1 s', async () => {
    const p = await newPerson(one.url, admin, 'revokee@example.test');
    await addMember(one.url, admin, ws, 'revokee@example.test');
    const key = await newKey(one.url, p.token, ws);
    assert.ok((await within(1000, async () => (await status(two!.url, key.key)) === 200)) >= 0);
    assert.is((await call(one.url, 'DELETE', `/workspaces/${ws}/keys/${key.id}`, { auth: p.token })).status, 204);
    const took = await within(1000, async () => (await status(two!.url, key.key)) === 401);
    assert.ok(took >= 0, 'refused on the other replica within 1 s');
  });

  test('a member suspended through one replica is refused by the other within 1 s', async () => {
    const p = await newPerson(one.url, admin, 'suspendee@example.test');
    await addMember(one.url, admin, ws, 'suspendee@example.test');
    const key = await newKey(one.url, p.token, ws);
    assert.ok((await within(1000, async () => (await status(two!.url, key.key)) === 200)) >= 0);
    const r = await call(one.url, 'PATCH', `/workspaces/${ws}/members/${p.id}`, { auth: admin, body: { status: 'suspended' } });
    assert.is(r.status, 200);
    assert.ok((await within(1000, async () => (await status(two!.url, key.key)) === 401)) >= 0, 'refused on replica two within 1 s');
    await call(two!.url, 'PATCH', `/workspaces/${ws}/members/${p.id}`, { auth: admin, body: { status: 'active' } });
    assert.ok((await within(1000, async () => (await status(one.url, key.key)) === 200)) >= 0, 'reinstated through replica two');
  });

  test('a person suspended instance-wide through one replica loses sessions and keys on the other within 1 s', async () => {
    const p = await newPerson(one.url, admin, 'banned@example.test');
    await addMember(one.url, admin, ws, 'banned@example.test');
    const key = await newKey(one.url, p.token, ws);
    assert.ok((await within(1000, async () => (await status(two!.url, p.token)) === 200)) >= 0);
    await call(one.url, 'PATCH', `/persons/${p.id}`, { auth: admin, body: { status: 'suspended' } });
    const took = await within(1000, async () => (await status(two!.url, p.token)) === 401 && (await status(two!.url, key.key)) === 401);
    assert.ok(took >= 0);
  });
} else {
  test('embedded: a change is in force on this replica before the response returns', async () => {
    const p = await newPerson(one.url, admin, 'local@example.test');
    await addMember(one.url, admin, ws, 'local@example.test');
    const key = await newKey(one.url, p.token, ws);
    assert.is(await status(one.url, key.key), 200);
    await call(one.url, 'DELETE', `/workspaces/${ws}/keys/${key.id}`, { auth: p.token });
    assert.is(await status(one.url, key.key), 401);
  });
}

test.run();
