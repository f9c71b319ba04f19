import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ProviderRegistryToken, type ProviderRegistry } from '../../kernel/index.js';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { drain, rejectsWith, testCall, testModel } from './contract.js';

const test = suite(`providers plugin registry (${shape})`);
const key = 'sk-canary-registry-5e1b';
let backing: Backing;
let svc: TestService;
let mock: MockUpstream;
let registry: ProviderRegistry;

test.before(async () => {
  backing = await createBacking();
  mock = await new MockUpstream({ apiKey: key }).start();
  svc = await startService({ backing, overrides: { plugins: { providers: { config: { idleMs: 300 } } } } });
  registry = svc.service.container.resolve<ProviderRegistry>(ProviderRegistryToken.id);
});
test.after(async () => {
  await svc.stop();
  await mock.stop();
  await backing.drop();
});

test('vendor factories are found by folder, not by a list', () => {
  assert.ok(registry.vendors().includes('openai-compatible'));
  assert.is(registry.factory('openai-compatible')?.vendor, 'openai-compatible');
  assert.is(registry.factory('no-such-vendor'), undefined);
  assert.equal(svc.logs.events('providers.loaded')[0]?.vendors, registry.vendors());
});

test('an unknown provider is provider_not_configured (422)', () => {
  try {
    registry.adapter('nope');
    assert.unreachable('adapter() should throw');
  } catch (err) {
    assert.is((err as { code: string }).code, 'provider_not_configured');
    assert.is((err as { status: number }).status, 422);
  }
  assert.throws(() => registry.probe('no-such-vendor', { name: 'x', address: mock.url }), (e: { code: string }) => e.code === 'provider_not_configured');
});

test('probe builds a throwaway adapter with the configured timeouts', async () => {
  const probe = registry.probe('openai-compatible', { name: 'trial', address: mock.url, apiKey: key });
  try {
    assert.is(await probe.check(AbortSignal.timeout(2000)), 'connected');
    const wrong = registry.probe('openai-compatible', { name: 'trial', address: mock.url, apiKey: 'sk-wrong' });
    assert.is(await wrong.check(AbortSignal.timeout(2000)), 'key_refused');
    await wrong.close();
    mock.enqueue({ chunks: ['a', 'b'], gapMs: 800 }); // longer than idleMs: 300 from the plugin config
    const { error } = await drain(await probe.stream(testCall(testModel(), { stream: true })));
    assert.is((error as { code: string }).code, 'stream_interrupted');
    mock.enqueue({ reply: { content: 'ok' } });
    assert.is((await probe.complete(testCall(testModel()))).choices[0]?.message.content, 'ok');
  } finally {
    await probe.close();
  }
});

test('the key and address never reach logs', async () => {
  const probe = registry.probe('openai-compatible', { name: 'trial', address: mock.url, apiKey: key });
  mock.enqueue({ error: { status: 401, body: { error: { message: `bad key ${key}` } } } });
  await rejectsWith(probe.complete(testCall(testModel())), 'provider_auth_failed');
  await probe.close();
  assert.not.match(svc.logs.text, key);
  assert.not.match(svc.logs.text, `127.0.0.1:${mock.port}`);
});

test('a bad config value stops boot with the field named', async () => {
  try {
    await startService({ backing, overrides: { plugins: { providers: { config: { firstByteMs: 0 } } } } });
    assert.unreachable('boot should fail');
  } catch (err) {
    assert.match((err as Error).message, 'plugins.providers.config.firstByteMs');
  }
});

test.run();
