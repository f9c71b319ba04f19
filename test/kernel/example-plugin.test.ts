import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBacking, startService, shape, type Backing, type TestService } from '../support/harness.js';
import { repoRoot } from './fixtures/cli.js';

const test = suite(`example third-party plugin: hello (${shape})`);
const helloModule = join(repoRoot, 'dist/examples/hello-plugin/index.js');
const probeModule = fileURLToPath(new URL('./fixtures/probe-plugin.js', import.meta.url));
/** The model route (plugins/chat-api) and the plugins it needs, when they are built. */
const chatBuilt = existsSync(join(repoRoot, 'dist/plugins/chat-api/index.js'));
const chatPlugins = { 'admin-api': {}, identity: {}, providers: {}, catalog: {}, 'chat-api': {} };

let backing: Backing;
let svc: TestService;

test.before(async () => {
  backing = await createBacking();
  svc = await startService({
    backing,
    overrides: { plugins: { hello: { module: helloModule, config: { greeting: 'hi there' } }, probe: { module: probeModule } } },
  });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
});

test('loaded by module path: listed in api.started, GET /hello answers with the configured greeting', async () => {
  assert.ok((svc.logs.events('api.started')[0]!.plugins as string[]).includes('hello'));
  const res = await fetch(`${svc.url}/hello`);
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/json');
  assert.ok(res.headers.get('x-svc-request-id'));
  assert.equal(await res.json(), { greeting: 'hi there' });
});

test('its receive hook is registered with the pipeline', () => {
  assert.ok(svc.service.pipeline.describe().receive.includes('hello'));
  for (const [phase, plugins] of Object.entries(svc.service.pipeline.describe())) {
    if (phase !== 'receive') assert.not.ok(plugins.includes('hello'), `hello hooks only receive, found in ${phase}`);
  }
});

test('a request through the receive phase carries x-hello', async () => {
  const res = await fetch(`${svc.url}/probe/pipeline`, { method: 'POST' });
  assert.is(res.status, 200);
  assert.is(res.headers.get('x-hello'), 'hi there');
  assert.equal(await res.json(), { headers: { 'x-hello': 'hi there' } });
});

test('the header is not added to routes outside the pipeline', async () => {
  const res = await fetch(`${svc.url}/healthz`);
  assert.is(res.headers.get('x-hello'), null);
});

const chatTest = chatBuilt ? test : test.skip;
chatTest('end to end: an unauthenticated POST /v1/chat/completions is refused 401 and still carries x-hello', async () => {
  const b = await createBacking();
  const s = await startService({ backing: b, overrides: { plugins: { ...chatPlugins, hello: { module: helloModule, config: { greeting: 'hi there' } } } } });
  try {
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.is(res.status, 401);
    assert.is(res.headers.get('x-hello'), 'hi there');
    assert.match(res.headers.get('x-svc-request-id') ?? '', /^req_/);
    assert.is(((await res.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  } finally {
    await s.stop();
    await b.drop();
  }
});

test('default greeting when the config slice is empty', async () => {
  const b = await createBacking();
  const s = await startService({ backing: b, overrides: { plugins: { hello: { module: helloModule } } } });
  try {
    assert.equal(await (await fetch(`${s.url}/hello`)).json(), { greeting: 'hello' });
  } finally {
    await s.stop();
    await b.drop();
  }
});

test('enabled: false: /hello answers 404 not_found and the hook is absent', async () => {
  const b = await createBacking();
  const s = await startService({ backing: b, overrides: { plugins: { hello: { module: helloModule, enabled: false }, probe: { module: probeModule } } } });
  try {
    const res = await fetch(`${s.url}/hello`);
    assert.is(res.status, 404);
    assert.equal(await res.json(), { error: { message: 'No route for GET /hello.', type: 'not_found_error', param: null, code: 'not_found' } });
    assert.not.ok(s.service.pipeline.describe().receive.includes('hello'));
    assert.not.ok((s.logs.events('api.started')[0]!.plugins as string[]).includes('hello'));
    const piped = await fetch(`${s.url}/probe/pipeline`, { method: 'POST' });
    assert.is(piped.status, 200);
    assert.is(piped.headers.get('x-hello'), null);
  } finally {
    await s.stop();
    await b.drop();
  }
});

test.run();
