import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { errorTable, type ErrorCode } from '../../kernel/index.js';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { crashCanary } from './fixtures/probe-plugin.js';

const test = suite(`error rendering (${shape})`);
const probeModule = fileURLToPath(new URL('./fixtures/probe-plugin.js', import.meta.url));
const requestId = /^req_[0-9a-v]{9}[A-Za-z0-9_-]{12}$/;
let backing: Backing;
let svc: TestService;

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing, overrides: { plugins: { probe: { module: probeModule } } } });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('the table holds exactly the spec codes with their statuses', () => {
  const statuses = Object.fromEntries(Object.entries(errorTable).map(([code, row]) => [code, row.status]));
  assert.equal(statuses, {
    invalid_request: 400, context_length_exceeded: 400, output_too_long: 400, content_filter: 400, provider_rejected_request: 400,
    invalid_api_key: 401, budget_exceeded: 402, forbidden: 403, access_revoked: 403, model_not_found: 404, not_found: 404,
    request_too_large: 413, no_model: 422, provider_not_configured: 422, unsupported_input: 422, rate_limited: 429,
    upstream_unavailable: 502, provider_auth_failed: 502, provider_billing: 502, provider_model_not_found: 502, stream_interrupted: 502,
    budget_unavailable: 503, server_shutting_down: 200, credential_key_unavailable: 500, internal_error: 500,
  });
  assert.is(errorTable.budget_exceeded.type, 'budget_exceeded');
  assert.is(errorTable.rate_limited.type, 'rate_limit_error');
});

test('every code renders {error:{message,type,param,code}} with its status and a request id', async () => {
  const ids = new Set<string>();
  for (const [code, row] of Object.entries(errorTable) as Array<[ErrorCode, (typeof errorTable)[ErrorCode]]>) {
    const res = await fetch(`${svc.url}/probe/throw/${code}`);
    assert.is(res.status, row.status, code);
    assert.is(res.headers.get('content-type'), 'application/json', code);
    const id = res.headers.get('x-svc-request-id') ?? '';
    assert.match(id, requestId, code);
    ids.add(id);
    assert.equal(await res.json(), { error: { message: `probe says ${code}`, type: row.type, param: null, code } }, code);
  }
  assert.is(ids.size, Object.keys(errorTable).length, 'request ids are unique');
});

test('param, svc details and extra headers are written when given', async () => {
  const res = await fetch(`${svc.url}/probe/throw/rate_limited?extras=1`);
  assert.is(res.status, 429);
  assert.is(res.headers.get('retry-after'), '7');
  assert.equal(await res.json(), {
    error: { message: 'probe says rate_limited', type: 'rate_limit_error', param: 'probe_param', code: 'rate_limited', svc: { scope: 'member', remaining_micro_usd: 5 } },
  });
});

test('a plain Error thrown by a route is 500 internal_error that leaks nothing', async () => {
  for (const [path, errorClass] of [['/probe/crash', 'Error'], ['/probe/crash-async', 'TypeError']] as const) {
    const res = await fetch(`${svc.url}${path}`);
    assert.is(res.status, 500);
    const id = res.headers.get('x-svc-request-id') ?? '';
    assert.match(id, requestId);
    const text = await res.text();
    assert.not.match(text, /canary|TypeError|at .*\.js/);
    assert.equal(JSON.parse(text), {
      error: { message: 'The service failed to handle the request; the request id identifies it.', type: 'server_error', param: null, code: 'internal_error' },
    });
    const failed = svc.logs.events('request.failed').find((e) => e.request_id === id);
    assert.ok(failed, 'request.failed is logged with the request id');
    assert.is(failed!.status, 500);
    assert.is(failed!.code, 'internal_error');
    // The class of what failed and its code (none here), never its message.
    assert.equal([failed!.error_class, failed!.cause], [errorClass, 'none']);
  }
  assert.not.ok(svc.logs.text.includes(crashCanary), 'the error message never reaches the log');
});

test('refusals carry the request id too: no route, unknown method on a path, bad JSON', async () => {
  const checks: Array<[string, RequestInit, number, string]> = [
    ['/nope', {}, 404, 'not_found'],
    ['/hello-nobody', { method: 'DELETE' }, 404, 'not_found'],
    ['/probe/echo', { method: 'POST', body: '{bad json' }, 400, 'invalid_request'],
  ];
  for (const [path, init, status, code] of checks) {
    const res = await fetch(`${svc.url}${path}`, init);
    assert.is(res.status, status, path);
    assert.match(res.headers.get('x-svc-request-id') ?? '', requestId, path);
    assert.is(((await res.json()) as { error: { code: string } }).error.code, code, path);
  }
});

test('success responses carry the request id as well', async () => {
  const res = await fetch(`${svc.url}/healthz`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('x-svc-request-id') ?? '', requestId);
});

test.run();
