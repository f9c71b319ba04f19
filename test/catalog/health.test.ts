import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { startCatalog, type CatalogService } from './support/setup.js';
import { ModelsUpstream, closedAddress } from './support/upstream.js';

type Health = { status: string; checks: Record<string, { status: string; latency_ms: number; error_code?: string }> };

const test = suite(`catalog provider health (${shape})`);
let backing: Backing;
let svc: CatalogService;
const keyed = new ModelsUpstream('sk-health');
const slow = new ModelsUpstream();
// A short check timeout so that a slow provider is reported as `timeout` quickly.
const overrides = { plugins: { catalog: { config: { checkTimeoutMs: 700, healthWaitMs: 1500 } } } };

async function healthz(url: string): Promise<{ status: number; text: string; body: Health }> {
  const res = await fetch(`${url}/healthz`);
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Health };
}

test.before(async () => {
  await keyed.start();
  await slow.start();
  slow.delayMs = 1200;
  backing = await createBacking();
  svc = await startCatalog(backing, {}, overrides);
  await svc.admin.ok('POST', '/providers', { name: 'up', address: keyed.address, api_key: 'sk-health' });
  await svc.admin.ok('POST', '/providers', { name: 'refused', address: keyed.address, api_key: 'sk-wrong' });
  await svc.admin.ok('POST', '/providers', { name: 'unreachable', address: await closedAddress() });
  await svc.admin.ok('POST', '/providers', { name: 'slow', address: slow.address });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
  await keyed.stop();
  await slow.stop();
});

test('provider:<name> for each provider: ok, or down with auth_failed / unreachable / timeout; degraded, 200', async () => {
  const r = await healthz(svc.url);
  assert.is(r.status, 200);
  assert.is(r.body.status, 'degraded');
  const c = r.body.checks;
  assert.equal(Object.keys(c).filter((k) => k.startsWith('provider:')).sort(), ['provider:refused', 'provider:slow', 'provider:unreachable', 'provider:up']);
  assert.equal([c['provider:up']!.status, c['provider:up']!.error_code], ['ok', undefined]);
  assert.equal([c['provider:refused']!.status, c['provider:refused']!.error_code], ['down', 'auth_failed']);
  assert.equal([c['provider:unreachable']!.status, c['provider:unreachable']!.error_code], ['down', 'unreachable']);
  assert.equal([c['provider:slow']!.status, c['provider:slow']!.error_code], ['down', 'timeout']);
  for (const check of Object.values(c)) assert.ok(Number.isInteger(check.latency_ms) && check.latency_ms >= 0);
  assert.not.match(r.text, /127\.0\.0\.1|http:|\/v1|sk-/);
  assert.ok(String(keyed.port).length > 0 && !r.text.includes(`:${keyed.port}`));
});

test('the free check runs at most once a minute per provider and key: the admin check counts, repeated /healthz does not call again', async () => {
  const before = keyed.hits();
  for (let i = 0; i < 3; i++) await healthz(svc.url);
  assert.is(keyed.hits(), before);
  // A new key is a new check (made by the change itself), then again nothing until the minute is over.
  await svc.admin.ok('PATCH', '/providers/refused', { api_key: 'sk-health' });
  assert.is(keyed.hits(), before + 1);
  const r = await healthz(svc.url);
  assert.is(r.body.checks['provider:refused']!.status, 'ok');
  await healthz(svc.url);
  assert.is(keyed.hits(), before + 1);
});

test('another replica reuses the shared result (scale-out) or checks once itself (embedded: its own cache)', async () => {
  const other = await startCatalog(backing, {}, overrides);
  try {
    const before = keyed.hits();
    for (let i = 0; i < 3; i++) {
      const r = await healthz(other.url);
      assert.is(r.body.checks['provider:up']!.status, 'ok');
      assert.is(r.body.checks['provider:refused']!.status, 'ok');
    }
    assert.is(keyed.hits(), before + (shape === 'scale-out' ? 0 : 2));
  } finally {
    await other.stop();
  }
});

test('a removed provider leaves /healthz', async () => {
  await svc.admin.ok('DELETE', '/providers/unreachable?confirm=unreachable');
  const r = await healthz(svc.url);
  assert.is(r.body.checks['provider:unreachable'], undefined);
  assert.ok(r.body.checks['provider:up']);
});

test.run();
