import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { modelName, startChatWorld, type ChatWorld } from './setup.js';

// The model API signed in by a person's session cookie (the web UI's chat page): reads need
// nothing more; a cookie-signed POST must carry x-svc-csrf, as on the admin API.
const test = suite(`chat: session cookie and x-svc-csrf on the model API (${shape})`);
let w: ChatWorld;
const body = JSON.stringify({ model: modelName, messages: [{ role: 'user', content: 'Hello' }] });

test.before(async () => {
  w = await startChatWorld();
});
test.after(async () => w?.stop());
test.before.each(() => w.mock.reset());

const post = (headers: Record<string, string>) =>
  fetch(`${w.svc.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-workspace': w.workspaceId, ...headers }, body });
const upstreamCalls = () => w.mock.requests.filter((r) => r.path === '/v1/chat/completions').length;

test('a cookie-signed POST without x-svc-csrf: 403 forbidden naming the header; nothing is sent upstream', async () => {
  const res = await post({ cookie: `svc_session=${w.admin.token}` });
  assert.is(res.status, 403);
  assert.ok(res.headers.get('x-svc-request-id'));
  assert.is(res.headers.get('x-should-retry'), 'false');
  const { error } = (await res.json()) as { error: { code: string; type: string; param: unknown; message: string } };
  assert.equal([error.code, error.param], ['forbidden', null]);
  assert.match(error.message, /x-svc-csrf/);
  assert.is(upstreamCalls(), 0);
});

test('with x-svc-csrf the person’s cookie session is served in the workspace x-svc-workspace names', async () => {
  const res = await post({ cookie: `other=1; svc_session=${w.admin.token}`, 'x-svc-csrf': '1' });
  assert.is(res.status, 200);
  assert.is(res.headers.get('x-svc-model'), modelName);
  const reply = (await res.json()) as { choices: Array<{ message: { content: string } }> };
  assert.is(reply.choices[0]!.message.content, 'Hello from the mock.');
  assert.is(upstreamCalls(), 1);
});

test('a wrong cookie is 401 invalid_api_key before the CSRF rule; bearer callers never need the header', async () => {
  const wrong = await post({ cookie: 'svc_session=sess_not-a-session' });
  assert.is(wrong.status, 401);
  assert.is(((await wrong.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  // A key (with an unrelated cookie along) and a session token sent as a bearer token: no header needed.
  const byKey = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.apiKey, maxRetries: 0, defaultHeaders: { cookie: 'theme=dark' } });
  assert.is((await byKey.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] })).choices[0]!.message.content, 'Hello from the mock.');
  const bySession = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.admin.token, maxRetries: 0, defaultHeaders: { 'x-svc-workspace': w.workspaceId } });
  assert.is((await bySession.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] })).choices[0]!.message.content, 'Hello from the mock.');
  assert.is(upstreamCalls(), 2);
});

test('GET /v1/models with the cookie needs no header and lists what the person may use', async () => {
  const res = await fetch(`${w.svc.url}/v1/models`, { headers: { cookie: `svc_session=${w.admin.token}`, 'x-svc-workspace': w.workspaceId } });
  assert.is(res.status, 200);
  const list = (await res.json()) as { data: Array<{ id: string }> };
  assert.equal(list.data.map((m) => m.id), ['auto', modelName]);
});

test.run();
