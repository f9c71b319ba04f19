import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing, type TestService } from '../support/harness.js';
import { addMember, adminEmail, adminPassword, boot, call, newKey, newWorkspace, signIn } from './support.js';

const test = suite(`identity: secrets never leak (${shape})`);
let backing: Backing;
let svc: TestService;

test.before(async () => {
  backing = await createBacking();
  svc = await boot(backing);
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('passwords, session tokens, reset tokens and key values never reach logs or later responses', async () => {
  const secrets: string[] = [adminPassword];
  const admin = await signIn(svc.url, adminEmail, adminPassword);
  secrets.push(admin);
  const memberPassword = 'canary-member-pw-51c0';
  const person = await call(svc.url, 'POST', '/persons', { auth: admin, body: { email: 'canary@example.test', password: memberPassword } });
  secrets.push(memberPassword);
  const member = await signIn(svc.url, 'canary@example.test', memberPassword);
  secrets.push(member);
  const ws = await newWorkspace(svc.url, admin, 'Canary');
  await addMember(svc.url, admin, ws, 'canary@example.test');
  const memberKey = await newKey(svc.url, member, ws, 'canary key');
  const adminKey = await newKey(svc.url, admin, ws, 'admin key');
  secrets.push(memberKey.key, adminKey.key);
  const changed = 'canary-changed-pw-9d2e';
  await call(svc.url, 'POST', '/me/password', { auth: member, body: { current_password: memberPassword, new_password: changed } });
  secrets.push(changed);
  const link = await call(svc.url, 'POST', `/persons/${person.body.id}/password-reset`, { auth: admin });
  const reset = 'canary-reset-pw-0b7f';
  await call(svc.url, 'POST', '/password-reset', { body: { token: link.body.token, password: reset } });
  secrets.push(link.body.token, reset);
  const again = await signIn(svc.url, 'canary@example.test', reset);
  secrets.push(again);
  // Failed attempts carry secrets too.
  await call(svc.url, 'POST', '/sessions', { body: { email: 'canary@example.test', password: 'canary-wrong-pw-77aa' } });
  await call(svc.url, 'GET', '/me', { auth: 'svc_canaryWrongKeyValue0000000000000000000000000' });
  secrets.push('canary-wrong-pw-77aa', 'svc_canaryWrongKeyValue0000000000000000000000000');
  for (const key of [memberKey, adminKey]) await call(svc.url, 'GET', '/me', { auth: key.key });

  const reads: Array<[string, string]> = [
    ['/me', admin],
    ['/me', again],
    ['/me', memberKey.key],
    ['/persons', admin],
    [`/persons/${person.body.id}`, admin],
    ['/workspaces', again],
    ['/workspaces?scope=all', admin],
    [`/workspaces/${ws}`, again],
    [`/workspaces/${ws}/members`, admin],
    [`/workspaces/${ws}/keys`, admin],
    [`/workspaces/${ws}/keys`, again],
    [`/workspaces/${ws}/keys`, memberKey.key],
  ];
  for (const [path, auth] of reads) {
    const r = await call(svc.url, 'GET', path, { auth });
    assert.is(r.status, 200, path);
    for (const s of secrets) assert.not.ok(r.text.includes(s), `${path} leaks a secret`);
    assert.not.ok(/scrypt|password_hash|key_hash|token_hash/.test(r.text), path);
  }
  await svc.service.stop();
  for (const s of secrets) assert.not.ok(svc.logs.text.includes(s), 'a secret reached the logs');
  assert.not.ok(svc.logs.text.includes('canary@example.test'), 'log lines carry ids, not emails');
  assert.ok(svc.logs.events('identity.audit').length >= 8);
});

test.run();
