import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, startService, type Backing, type TestService } from '../support/harness.js';
import { adminEnv } from '../support/provision.js';
import { MetricsAddressToken } from '../../plugins/metrics/index.js';
import { metricsPlugins, scrape, scrapeToken, value } from './support.js';

/** Where /metrics answers: nowhere by default (404), the service's port with a token, or a separate address. */
const test = suite('metrics: off by default; a separate listen address; settings checked at start');

let backing: Backing;
test.before(async () => {
  backing = await createBacking();
});
test.after(() => backing.drop());

async function withService(env: NodeJS.ProcessEnv, plugins: Record<string, unknown>, fn: (svc: TestService) => Promise<void>): Promise<void> {
  const svc = await startService({ backing, env: { ...adminEnv, ...env }, overrides: { plugins } });
  try {
    await fn(svc);
  } finally {
    await svc.stop();
  }
}

test('off by default: the plugin loaded without token or address answers 404 not_found, with or without a token', async () => {
  await withService({}, metricsPlugins(), async (svc) => {
    for (const token of [undefined, scrapeToken]) {
      const r = await scrape(`${svc.url}/metrics`, token);
      assert.is(r.status, 404);
      assert.is((JSON.parse(r.text) as { error: { code: string } }).error.code, 'not_found');
    }
    assert.is(svc.service.get(MetricsAddressToken)(), null);
  });
});

test('a separate address: /metrics there (no token needed), 404 on the service port and for other paths', async () => {
  await withService({ SVC_METRICS_LISTEN: '127.0.0.1:0' }, metricsPlugins(), async (svc) => {
    const apart = svc.service.get(MetricsAddressToken)()!;
    assert.match(apart, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.is.not(new URL(apart).port, new URL(svc.url).port);
    assert.is((await scrape(`${svc.url}/metrics`)).status, 404);
    const r = await scrape(apart);
    assert.is(r.status, 200);
    assert.is(value(r.families, 'svc_dependency_up', { dependency: 'database' }), 1);
    assert.is(value(r.families, 'svc_requests_total'), 0);
    // A model request through the service's port shows on the separate address.
    const res = await fetch(`${svc.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer svc_nope', 'content-type': 'application/json' }, body: '{}' });
    assert.is(res.status, 401);
    const after = await scrape(apart);
    assert.is(value(after.families, 'svc_requests_total', { status: '401', error_code: 'invalid_api_key' }), 1);
    const other = await fetch(apart.replace(/\/metrics$/, '/healthz'));
    assert.is(other.status, 404);
    assert.is(((await other.json()) as { error: { code: string } }).error.code, 'not_found');
  });
});

test('a separate address with a token: the token is asked there too', async () => {
  await withService({ SVC_METRICS_LISTEN: '127.0.0.1:0', SVC_METRICS_TOKEN: scrapeToken }, metricsPlugins(), async (svc) => {
    const apart = svc.service.get(MetricsAddressToken)()!;
    assert.is((await scrape(apart)).status, 401);
    assert.is((await scrape(apart, scrapeToken)).status, 200);
    assert.is((await scrape(`${svc.url}/metrics`, scrapeToken)).status, 404);
  });
});

test('a short token or a malformed address stops start-up with a message naming the setting', async () => {
  for (const [env, message] of [
    [{ SVC_METRICS_TOKEN: 'short' }, /SVC_METRICS_TOKEN must be at least 16 characters/],
    [{ SVC_METRICS_LISTEN: '9464' }, /SVC_METRICS_LISTEN must be host:port/],
  ] as const) {
    let failed: Error | undefined;
    await startService({ backing, env: { ...adminEnv, ...env }, overrides: { plugins: metricsPlugins() } }).then((s) => s.stop(), (e: Error) => (failed = e));
    assert.ok(failed, JSON.stringify(env));
    assert.match(failed!.message, message);
  }
});

test.run();
