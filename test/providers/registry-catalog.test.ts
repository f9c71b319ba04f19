import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ProviderRegistryToken, type ProviderRegistry } from '../../kernel/index.js';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEnv } from '../support/provision.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { testCall, testModel } from './contract.js';

const test = suite(`provider registry with the real catalog (${shape})`);
const key = `sk-canary-${randomBytes(8).toString('hex')}`;
let backing: Backing;
let svc: TestService;
let admin: Admin;
let registry: ProviderRegistry;
const a = new MockUpstream({ apiKey: key });
const b = new MockUpstream({ apiKey: key });

test.before(async () => {
  backing = await createBacking();
  await a.start();
  await b.start();
  const env = { ...adminEnv, SVC_RECOVERY_KEYS: `v1:${randomBytes(32).toString('base64')}` };
  svc = await startService({ backing, env, overrides: { plugins: { 'admin-api': {}, identity: {}, providers: {}, catalog: {} } } });
  admin = await Admin.signIn(svc.url);
  registry = svc.service.container.resolve<ProviderRegistry>(ProviderRegistryToken.id);
});
test.after(async () => {
  await svc.stop();
  await a.stop();
  await b.stop();
  await backing.drop();
});

test('adapter(name) reads the row and key from the catalog and keeps one adapter per provider', async () => {
  await admin.provider('local', a.url, key);
  const first = registry.adapter('local');
  assert.is(registry.adapter('local'), first);
  a.enqueue({ reply: { content: 'from a' } });
  const reply = await first.complete(testCall(testModel('llama3:8b')));
  assert.is(reply.choices[0]?.message.content, 'from a');
  const sent = a.requests.find((r) => r.path === '/v1/chat/completions');
  assert.is(sent?.headers.authorization, `Bearer ${key}`);
  assert.is(sent?.body.model, 'llama3:8b');
});

test('a changed provider gets a fresh adapter with its new address; a removed one is provider_not_configured', async () => {
  const before = registry.adapter('local');
  await admin.ok('PATCH', '/providers/local', { address: b.url });
  const after = registry.adapter('local');
  assert.is.not(after, before);
  b.enqueue({ reply: { content: 'from b' } });
  assert.is((await after.complete(testCall(testModel()))).choices[0]?.message.content, 'from b');
  await admin.ok('DELETE', '/providers/local?confirm=local');
  try {
    registry.adapter('local');
    assert.unreachable('a removed provider has no adapter');
  } catch (err) {
    assert.is((err as { code: string }).code, 'provider_not_configured');
  }
});

test('the provider key never reaches the logs', () => {
  assert.not.match(svc.logs.text, key);
});

test.run();
