import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const test = suite(`healthz (${shape})`);
let backing: Backing;
let svc: TestService;

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('ok with database and cache reachable, no sign-in, request id on every response', async () => {
  const res = await fetch(`${svc.url}/healthz`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('x-svc-request-id') ?? '', /^req_[0-9a-v]{9}[A-Za-z0-9_-]{12}$/);
  const body = (await res.json()) as { status: string; checks: Record<string, { status: string; latency_ms: number }> };
  // The classifier (routing plugin) is not critical: without it the service is `degraded`, never `down` (test/routing covers it).
  assert.equal(Object.keys(body.checks).sort(), ['cache', 'classifier', 'database']);
  assert.is(body.status, body.checks.classifier!.status === 'ok' ? 'ok' : 'degraded');
  for (const [name, c] of Object.entries(body.checks)) {
    if (name !== 'classifier') assert.is(c.status, 'ok');
    assert.ok(Number.isInteger(c.latency_ms));
  }
});

test('unknown path answers 404 not_found in the spec shape', async () => {
  const res = await fetch(`${svc.url}/nope`);
  assert.is(res.status, 404);
  assert.ok(res.headers.get('x-svc-request-id'));
  assert.equal(await res.json(), { error: { message: 'No route for GET /nope.', type: 'not_found_error', param: null, code: 'not_found' } });
});

if (shape === 'scale-out') {
  test('cache unreachable (closed port): 503 down with checks.cache down, revealing no address', async () => {
    const b = await createBacking('scale-out');
    const s = await startService({ backing: { ...b, redisUrl: 'redis://127.0.0.1:6390' } });
    try {
      const res = await fetch(`${s.url}/healthz`);
      assert.is(res.status, 503);
      const text = await res.text();
      const body = JSON.parse(text) as { status: string; checks: Record<string, { status: string; error_code?: string }> };
      assert.is(body.status, 'down');
      assert.is(body.checks.cache!.status, 'down');
      assert.ok(['unreachable', 'timeout'].includes(body.checks.cache!.error_code ?? ''));
      assert.is(body.checks.database!.status, 'ok');
      assert.not.match(text, /6390|127\.0\.0\.1|redis:/);
      assert.is(s.logs.events('health.dependency_down')[0]?.component, 'cache');
    } finally {
      await s.stop();
      await b.drop();
    }
  });

  test('database cut mid-run: 503 down with checks.database down; ok again when it returns', async () => {
    const b = await createBacking('scale-out');
    const proxy = new TcpProxy(5432);
    await proxy.start();
    const url = new URL(b.databaseUrl!);
    url.port = String(proxy.port);
    const s = await startService({ backing: { ...b, databaseUrl: url.toString() } });
    try {
      assert.is((await fetch(`${s.url}/healthz`)).status, 200);
      await proxy.cut();
      const res = await fetch(`${s.url}/healthz`);
      assert.is(res.status, 503);
      const body = (await res.json()) as { status: string; checks: Record<string, { status: string }> };
      assert.is(body.status, 'down');
      assert.is(body.checks.database!.status, 'down');
      await proxy.restore();
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        status = (await fetch(`${s.url}/healthz`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      assert.is(status, 200);
    } finally {
      await s.stop();
      await proxy.cut().catch(() => {});
      await b.drop();
    }
  });
}

test.run();
