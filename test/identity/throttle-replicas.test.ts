import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { adminEmail, adminPassword, boot, call, signIn, type Json } from './support.js';
import { closeAgents, failUntilLocked, signInFrom, throttleConfig, wrongPassword } from './throttle-support.js';

const test = suite(`identity: sign-in locks across replicas and behind proxies (${shape})`);
let backing: Backing;
let one: TestService;
/** Scale-out: a second replica on the same database and Redis. Embedded is one process: one replica. */
let two: TestService;
let proxied: TestService;
let admin: string;
/** Embedded: the proxied service has its own memory cache and snapshot, so its own sign-in. */
let proxiedAdmin: string;

test.before(async () => {
  backing = await createBacking();
  one = await boot(backing, { config: throttleConfig });
  two = shape === 'scale-out' ? await boot(backing, { config: throttleConfig, noAdmin: true }) : one;
  // A third replica believes forwarded headers from loopback peers, as behind a local reverse proxy.
  proxied = await startService({
    backing,
    overrides: { server: { trustedProxies: ['127.0.0.0/8', '::1'] }, plugins: { 'admin-api': {}, identity: { config: throttleConfig } } },
  });
  admin = await signIn(one.url, adminEmail, adminPassword);
  proxiedAdmin = await signIn(proxied.url, adminEmail, adminPassword);
});
test.after(async () => {
  await closeAgents();
  await proxied.stop();
  if (two !== one) await two.stop();
  await one.stop();
  await backing.drop();
});

const tokenFor = (url: string) => (url === proxied.url ? proxiedAdmin : admin);
const locks = async (url: string): Promise<Json[]> => (await call(url, 'GET', '/sign-in-locks', { auth: tokenFor(url) })).body.data;

test('a lock made on one replica refuses on the other, is listed there, and is lifted there for both', async () => {
  const seen = await failUntilLocked(one.url, adminEmail, '127.0.8.1');
  assert.is(seen.filter((s) => s === 401).length, 6);
  const refused = await signInFrom(two.url, adminEmail, adminPassword, '127.0.8.2');
  assert.is(refused.status, 429);
  assert.ok(Number(refused.headers.get('retry-after')) > 50);
  const [lock] = (await locks(two.url)).filter((l) => l.subject === adminEmail);
  assert.ok(lock, 'listed on the other replica');
  assert.is((await call(two.url, 'DELETE', `/sign-in-locks/${lock.id}`, { auth: admin })).status, 204);
  assert.is((await signInFrom(one.url, adminEmail, adminPassword, '127.0.8.1')).status, 201);
  assert.equal(await locks(one.url), []);
});

test('behind a trusted proxy the forwarded address is the client: guesses through it count per real client', async () => {
  // Every guess comes from the same proxy socket; the clients it forwards for differ.
  for (let i = 0; i < 3; i++) {
    const r = await signInFrom(proxied.url, `n${i}@example.test`, wrongPassword, '127.0.9.1', { 'x-forwarded-for': '203.0.113.50' });
    assert.is(r.status, 401);
  }
  const seen = await failUntilLocked(proxied.url, (i) => `m${i}@example.test`, '127.0.9.1', () => ({ 'x-forwarded-for': '198.51.100.7, 203.0.113.60' }));
  assert.is(seen.filter((s) => s === 401).length, 20);
  // The nearest untrusted hop (203.0.113.60) is the client, not the forgeable left-most entry.
  const [lock] = (await locks(proxied.url)).filter((l) => l.scope === 'address');
  assert.is(lock?.subject, '203.0.113.60');
  const event = proxied.logs.events('auth.sign_in_throttled').find((e) => e.scope === 'address');
  assert.is(event?.client_address, '203.0.113.60');
  // Another client behind the same proxy signs in.
  const other = await signInFrom(proxied.url, adminEmail, adminPassword, '127.0.9.1', { 'x-forwarded-for': '203.0.113.50' });
  assert.is(other.status, 201);
  assert.is((await call(proxied.url, 'DELETE', `/sign-in-locks/${lock.id}`, { auth: proxiedAdmin })).status, 204);
});

test('IPv6 clients are counted per /64', async () => {
  for (const suffix of ['1', '2', '3']) {
    const r = await signInFrom(proxied.url, 'v6@example.test', wrongPassword, '127.0.9.2', { 'x-forwarded-for': `2001:db8:aa:bb::${suffix}` });
    assert.is(r.status, 401);
  }
  const seen = await failUntilLocked(proxied.url, (i) => `v6-${i}@example.test`, '127.0.9.2', (i) => ({ 'x-forwarded-for': `2001:db8:aa:bb:${i}::9` }));
  assert.is(seen.filter((s) => s === 401).length, 17, 'the /64 locks at its 20th failure, three of them spent above');
  const [lock] = (await locks(proxied.url)).filter((l) => l.scope === 'address');
  assert.is(lock?.subject, '2001:db8:aa:bb::/64');
  assert.is((await call(proxied.url, 'DELETE', `/sign-in-locks/${lock.id}`, { auth: proxiedAdmin })).status, 204);
});

test('the session cookie is Secure when the client came over HTTPS through a trusted proxy, and only then', async () => {
  const viaHttps = await signInFrom(proxied.url, adminEmail, adminPassword, '127.0.10.1', { 'x-forwarded-proto': 'https' });
  assert.is(viaHttps.status, 201);
  assert.match(viaHttps.headers.get('set-cookie') ?? '', /; Secure$/);
  const plain = await signInFrom(proxied.url, adminEmail, adminPassword, '127.0.10.1', { 'x-forwarded-proto': 'http' });
  assert.not.match(plain.headers.get('set-cookie') ?? '', /Secure/);
  // A client cannot claim HTTPS where no proxy is trusted.
  const forged = await signInFrom(one.url, adminEmail, adminPassword, '127.0.10.1', { 'x-forwarded-proto': 'https' });
  assert.is(forged.status, 201);
  assert.not.match(forged.headers.get('set-cookie') ?? '', /Secure/);
  // Signing out clears the cookie with the same attributes.
  const out = await call(proxied.url, 'DELETE', '/sessions/current', { auth: viaHttps.body.token, headers: { 'x-forwarded-proto': 'https' } });
  assert.is(out.status, 204);
  assert.match(out.headers.get('set-cookie') ?? '', /^svc_session=; .*Max-Age=0; Secure$/);
});

test.run();
