import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { adminEmail, adminPassword, boot, call, newPerson, signIn, type Json } from './support.js';
import { callFrom, closeAgents, failUntilLocked, signInFrom, sleep, throttleConfig, wrongPassword } from './throttle-support.js';

const test = suite(`identity: failed sign-ins are throttled, then locked (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: string;
let adminId: string;

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing, { config: throttleConfig });
  admin = await signIn(svc.url, adminEmail, adminPassword);
  adminId = (await call(svc.url, 'GET', '/me', { auth: admin })).body.person.id;
});
test.after(async () => {
  await closeAgents();
  await svc.stop();
  await backing.drop();
});

const locks = async (): Promise<Json[]> => (await call(svc.url, 'GET', '/sign-in-locks', { auth: admin })).body.data;
const unlock = (id: string) => call(svc.url, 'DELETE', `/sign-in-locks/${id}`, { auth: admin });

function assert429(r: { status: number; body: Json; headers: Headers }, maxSeconds: number): number {
  assert.is(r.status, 429);
  assert.is(r.body.error.code, 'rate_limited');
  assert.is(r.body.error.type, 'rate_limit_error');
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= maxSeconds, `Retry-After ${r.headers.get('retry-after')}`);
  return retry;
}

test('one address, one account: free tries, growing waits the right password does not pass, then a lock; logged without the password', async () => {
  const from = '127.0.0.11';
  for (let i = 1; i <= 3; i++) assert.is((await signInFrom(svc.url, adminEmail, wrongPassword, from)).status, 401, `free failure ${i}`);
  assert.is((await signInFrom(svc.url, adminEmail, wrongPassword, from)).status, 401, 'the 4th failure is answered, and starts a wait');
  // While waiting, even the right password is refused without being checked.
  assert429(await signInFrom(svc.url, adminEmail, adminPassword, from), 1);
  await sleep(150);
  assert.is((await signInFrom(svc.url, adminEmail, wrongPassword, from)).status, 401, '5th failure: the wait doubles');
  await sleep(120);
  assert429(await signInFrom(svc.url, adminEmail, wrongPassword, from), 1);
  await sleep(150);
  assert.is((await signInFrom(svc.url, adminEmail, wrongPassword, from)).status, 401, 'the 6th failure locks');
  const locked = await signInFrom(svc.url, adminEmail, adminPassword, from);
  assert.ok(assert429(locked, 60) >= 55, 'a lock lasts lockSeconds');
  assert.not.ok(locked.text.includes(adminPassword));

  const events = svc.logs.events('auth.sign_in_throttled').filter((e) => e.person_id === adminId);
  assert.equal(events.map((e) => e.state), ['delayed', 'delayed', 'locked']);
  assert.equal(events.map((e) => e.failures), [4, 5, 6]);
  assert.equal(Object.keys(events[2]!).filter((k) => !['time', 'level', 'event', 'plugin', 'msg'].includes(k)).sort(), ['action', 'client_address', 'failures', 'person_id', 'retry_after_s', 'scope', 'state']);
  assert.is(events[2]!.scope, 'account');
  assert.is(events[2]!.client_address, from);
  assert.is(events[2]!.retry_after_s, 60);
  assert.not.ok(svc.logs.text.includes(wrongPassword), 'no password in any log line');
  assert.not.ok(svc.logs.text.includes(adminPassword));
  assert.not.ok(svc.logs.text.includes(adminEmail), 'nor the e-mail');
});

test('an instance admin sees the lock and lifts it; the right password then works at once', async () => {
  const [lock] = (await locks()).filter((l) => l.scope === 'account' && l.subject === adminEmail);
  assert.ok(lock);
  assert.equal(Object.keys(lock).sort(), ['action', 'failures', 'id', 'locked_at', 'locked_until', 'person_id', 'scope', 'subject']);
  assert.is(lock.action, 'sign_in');
  assert.is(lock.person_id, adminId);
  assert.is(lock.failures, 6);
  assert.ok(Date.parse(lock.locked_until) - Date.parse(lock.locked_at) === 60_000);
  // Only instance admins: a person is refused, and so is a stranger.
  const person = await newPerson(svc.url, admin, 'plain@example.test');
  assert.is((await call(svc.url, 'GET', '/sign-in-locks', { auth: person.token })).status, 403);
  assert.is((await call(svc.url, 'DELETE', `/sign-in-locks/${lock.id}`, { auth: person.token })).status, 403);
  assert.is((await call(svc.url, 'GET', '/sign-in-locks')).status, 401);

  const r = await unlock(lock.id);
  assert.is(r.status, 204);
  assert.is((await unlock(lock.id)).status, 404, 'gone once lifted');
  assert.is((await unlock('not-a-lock')).body.error.code, 'not_found');
  assert.is((await signInFrom(svc.url, adminEmail, adminPassword, '127.0.0.11')).status, 201);
  // Its failures are forgotten too: three more are free again.
  for (let i = 0; i < 3; i++) assert.is((await signInFrom(svc.url, adminEmail, wrongPassword, '127.0.0.11')).status, 401);
  assert.is((await signInFrom(svc.url, adminEmail, adminPassword, '127.0.0.11')).status, 201, 'success resets the account');
});

test('many addresses, one account: the account locks whatever address the guesses come from', async () => {
  await newPerson(svc.url, admin, 'target@example.test', 'target-password-long');
  const seen: number[] = [];
  for (let i = 0; seen.filter((s) => s === 401).length < 6 && i < 40; i++) {
    const r = await signInFrom(svc.url, 'target@example.test', wrongPassword, `127.0.1.${i + 1}`);
    seen.push(r.status);
    if (r.status === 429) await sleep(120);
  }
  assert.is(seen.filter((s) => s === 401).length, 6, 'six guesses were checked, no more');
  assert429(await signInFrom(svc.url, 'target@example.test', 'target-password-long', '127.0.1.200'), 60);
  const [lock] = (await locks()).filter((l) => l.subject === 'target@example.test');
  assert.is(lock.scope, 'account');
  assert.is((await unlock(lock.id)).status, 204);
  assert.is((await signInFrom(svc.url, 'target@example.test', 'target-password-long', '127.0.1.200')).status, 201);
});

test('one address, many accounts: the address locks (a forged X-Forwarded-For does not help); other addresses still sign in', async () => {
  const from = '127.0.2.1';
  let checked = 0;
  for (let i = 0; i < 80 && checked < 20; i++) {
    // Two guesses per e-mail: no account gets near its own limit. No proxy is trusted, so the
    // forwarded address each guess claims is ignored.
    const r = await signInFrom(svc.url, `nobody${Math.floor(i / 2)}@example.test`, wrongPassword, from, { 'x-forwarded-for': `198.51.100.${i + 1}` });
    if (r.status === 401) checked++;
    else if (Number(r.headers.get('retry-after')) > 5) break;
    else await sleep(120);
  }
  assert.is(checked, 20);
  assert429(await signInFrom(svc.url, adminEmail, adminPassword, from), 60);
  assert.is((await signInFrom(svc.url, adminEmail, adminPassword, '127.0.2.2')).status, 201, 'another address is not locked');
  const [lock] = (await locks()).filter((l) => l.scope === 'address' && l.subject === from);
  assert.ok(lock, 'the address lock is listed with the address');
  assert.is(lock.person_id, null);
  const event = svc.logs.events('auth.sign_in_throttled').find((e) => e.scope === 'address' && e.state === 'locked');
  assert.is(event?.client_address, from);
  assert.is((await unlock(lock.id)).status, 204);
  assert.is((await signInFrom(svc.url, adminEmail, adminPassword, from)).status, 201);
});

test('a burst of parallel guesses cannot outrun the count: only lockAfterFailures are checked', async () => {
  await newPerson(svc.url, admin, 'burst@example.test');
  const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => signInFrom(svc.url, 'burst@example.test', wrongPassword, `127.0.3.${i + 1}`)));
  const checked = replies.filter((r) => r.status === 401).length;
  assert.ok(checked <= 6, `${checked} guesses checked`);
  assert.is(replies.filter((r) => r.status === 429).length, 40 - checked);
  assert429(await signInFrom(svc.url, 'burst@example.test', 'pw-burst@example.test-long', '127.0.3.99'), 60);
});

test('password resets: wrong links from one address are throttled and locked; an admin lifts it', async () => {
  const from = '127.0.4.1';
  const statuses = [];
  for (let i = 0; i < 80; i++) {
    const r = await callFrom(svc.url, 'POST', '/password-reset', { from, body: { token: `svcr_guess${i}`, password: 'a-new-password-long' } });
    statuses.push(r.status);
    if (r.status === 429 && Number(r.headers.get('retry-after')) > 5) break;
    if (r.status === 429) await sleep(120);
  }
  assert.is(statuses.filter((s) => s === 400).length, 20, 'the address limit (20) applies to reset links');
  const [lock] = (await locks()).filter((l) => l.action === 'password_reset');
  assert.is(lock.scope, 'address');
  assert.is(lock.subject, from);
  const event = svc.logs.events('auth.sign_in_throttled').find((e) => e.action === 'password_reset' && e.state === 'locked');
  assert.ok(event);
  // Reset guesses do not count against sign-in from there.
  assert.is((await signInFrom(svc.url, adminEmail, adminPassword, from)).status, 201);
  assert.is((await unlock(lock.id)).status, 204);
  const again = await callFrom(svc.url, 'POST', '/password-reset', { from, body: { token: 'svcr_after', password: 'a-new-password-long' } });
  assert.is(again.status, 400);
});

test('changing the own password counts wrong current passwords against the account', async () => {
  const p = await newPerson(svc.url, admin, 'changer@example.test');
  const statuses: number[] = [];
  for (let i = 0; i < 30 && statuses.filter((s) => s === 400).length < 6; i++) {
    const r = await callFrom(svc.url, 'POST', '/me/password', { auth: p.token, body: { current_password: wrongPassword, new_password: 'another-long-password' } });
    statuses.push(r.status);
    if (r.status === 429) await sleep(120);
  }
  assert.is(statuses.filter((s) => s === 400).length, 6);
  assert429(await signInFrom(svc.url, 'changer@example.test', p.password, '127.0.5.1'), 60);
});

test.run();
