import OpenAI from 'openai';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, startService } from '../support/harness.js';
import { vendorError } from '../support/mock-upstream.js';
import { startChatWorld, modelName, upstreamId, type ChatWorld } from './setup.js';
import { checkSdkError, hello, sdkError } from './support.js';

/**
 * Issue 9 item 8: what the official SDK and browsers expect of an OpenAI-compatible server —
 * request ids the SDK reads, retry hints it obeys, models.retrieve, CORS for allowed origins, and
 * a clear answer on the other vendors' APIs.
 */
const test = suite(`chat: client fit (${shape})`);
const allowed = 'https://app.example.test';
let w: ChatWorld;

test.before(async () => {
  w = await startChatWorld({ server: { corsOrigins: [allowed] } });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());

/** An SDK client that retries (the world's client does not), with no wait between tries. */
function retrying(apiKey = w.apiKey): OpenAI {
  return new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey, maxRetries: 2, timeout: 10_000 });
}
const chatCalls = (): number => w.mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

test('the SDK reads request_id from x-request-id, the same id as x-svc-request-id', async () => {
  const { data, response, request_id } = await w.client.chat.completions.create({ model: modelName, messages: hello }).withResponse();
  assert.ok(data.choices[0]);
  assert.match(request_id ?? '', /^req_/);
  assert.is(response.headers.get('x-svc-request-id'), request_id);
  const e = await sdkError(new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 }).models.list());
  assert.is(e.status, 401);
  assert.match(e.requestID ?? '', /^req_/);
  assert.is(e.headers?.get('x-svc-request-id'), e.requestID);
});

test('provider_model_not_found (502, Retry: No) carries x-should-retry: false; the SDK does not retry it', async () => {
  for (let i = 0; i < 3; i++) w.mock.enqueue({ error: vendorError('openai-model-not-found') });
  const e = await sdkError(retrying().chat.completions.create({ model: modelName, messages: hello }));
  checkSdkError(e, { status: 502, code: 'provider_model_not_found', svc: { provider: 'local', model: upstreamId } });
  assert.is(e.headers?.get('x-should-retry'), 'false');
  assert.is(chatCalls(), 1, 'one upstream call: the SDK obeyed x-should-retry');
});

test('a 422 and a 401 say x-should-retry: false; a 503-class refusal of the table says true', async () => {
  const e422 = await sdkError(retrying().chat.completions.create({ model: 'nobody:some-model', messages: hello }));
  assert.is(e422.status, 422);
  assert.is(e422.headers?.get('x-should-retry'), 'false');
  const e401 = await sdkError(retrying('sk-wrong').chat.completions.create({ model: modelName, messages: hello }));
  assert.is(e401.headers?.get('x-should-retry'), 'false');
  // upstream_unavailable is Retry: Yes; the SDK retries it (two retries), and svc itself tries each
  // of the SDK's requests three times (its own two retries before the first chunk): nine failures.
  for (let i = 0; i < 9; i++) w.mock.enqueue({ error: vendorError('openai-server-error') });
  const e502 = await sdkError(retrying().chat.completions.create({ model: modelName, messages: hello }, { maxRetries: 2 }));
  checkSdkError(e502, { status: 502, code: 'upstream_unavailable' });
  assert.is(e502.headers?.get('x-should-retry'), 'true');
  assert.ok(chatCalls() >= 9, `the SDK retried: ${chatCalls()} upstream calls`);
});

test('models.retrieve: ids with `/` and `:` (encoded by the SDK, or raw), auto; unknown is 404 model_not_found', async () => {
  const m = await w.client.models.retrieve(modelName);
  assert.is(m.id, modelName);
  assert.is(m.object, 'model');
  assert.is(m.owned_by, 'local');
  const raw = await fetch(`${w.svc.url}/v1/models/${modelName}`, { headers: { authorization: `Bearer ${w.apiKey}` } });
  assert.is(raw.status, 200);
  assert.is(((await raw.json()) as { id: string }).id, modelName);
  assert.is((await w.client.models.retrieve('auto')).id, 'auto');
  const e = await sdkError(w.client.models.retrieve('local:no/such:model'));
  checkSdkError(e, { status: 404, code: 'model_not_found', param: 'model' });
  const anon = await sdkError(new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 }).models.retrieve(modelName));
  checkSdkError(anon, { status: 401, code: 'invalid_api_key' });
});

test('POST /v1/responses and /v1/messages: 404 not_found saying svc speaks Chat Completions only', async () => {
  const e = await sdkError(w.client.responses.create({ model: modelName, input: 'Hello' }));
  checkSdkError(e, { status: 404, code: 'not_found' });
  assert.match(e.message, /Chat Completions/);
  assert.match(e.message, /openai-compatible/);
  const res = await fetch(`${w.svc.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"x","messages":[]}' });
  assert.is(res.status, 404);
  assert.ok(res.headers.get('x-svc-request-id'));
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.is(body.error.code, 'not_found');
  assert.match(body.error.message, /Chat Completions API only/);
  assert.is(chatCalls(), 0);
});

test('CORS: an allowed origin gets its preflight answered and the x-svc-* and retry headers exposed', async () => {
  const pre = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin: allowed, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
  });
  assert.is(pre.status, 204);
  assert.is(pre.headers.get('access-control-allow-origin'), allowed);
  assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  assert.is(pre.headers.get('access-control-allow-headers'), 'authorization, content-type, x-stainless-os');
  assert.is(pre.headers.get('access-control-allow-credentials'), null);
  assert.match(pre.headers.get('vary') ?? '', /Origin/);
  const res = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { origin: allowed, authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: modelName, messages: hello }),
  });
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), allowed);
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(', ');
  for (const h of ['x-svc-request-id', 'x-request-id', 'x-svc-model', 'retry-after', 'retry-after-ms', 'x-should-retry']) assert.ok(exposed.includes(h), h);
  await res.arrayBuffer();
});

test('CORS: an origin not on the list gets no CORS header (the browser withholds the reply)', async () => {
  const pre = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example.test', 'access-control-request-method': 'POST' },
  });
  assert.is(pre.status, 404);
  assert.is(pre.headers.get('access-control-allow-origin'), null);
  const res = await fetch(`${w.svc.url}/v1/models`, { headers: { origin: 'https://evil.example.test', authorization: `Bearer ${w.apiKey}` } });
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), null);
  await res.arrayBuffer();
});

test('CORS from SVC_CORS_ORIGINS: a comma list of origins', async () => {
  const backing = await createBacking();
  const svc = await startService({ backing, env: { SVC_CORS_ORIGINS: 'https://a.example.test, https://b.example.test' } });
  try {
    for (const origin of ['https://a.example.test', 'https://b.example.test']) {
      const pre = await fetch(`${svc.url}/v1/models`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
      assert.is(pre.status, 204);
      assert.is(pre.headers.get('access-control-allow-origin'), origin);
    }
  } finally {
    await svc.stop();
    await backing.drop();
  }
});

test.run();
