import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { startChatWorld, rawPost, modelName, upstreamId, type ChatWorld } from './setup.js';
import { checkRawError, expectSdk, hello, waitUsageRecord } from './support.js';
import { dataUrl, pdf, png } from './files.js';

/**
 * Every refusal the model API gives on its own (before any provider is called), through the
 * official SDK: status, code, param, svc details, x-svc-request-id, and the ErrorResponse schema.
 * Upstream error mapping is in upstream-errors.test.ts.
 */
const test = suite(`chat errors: refusals (${shape})`);
let w: ChatWorld;
const blind = 'local:blind-model';

type Body = Parameters<OpenAI['chat']['completions']['create']>[0];
/** A request with extra or wrongly typed fields the SDK's types would not allow. */
const call = (body: Record<string, unknown>) => w.client.chat.completions.create({ model: modelName, messages: hello, ...body } as unknown as Body);

test.before(async () => {
  w = await startChatWorld();
  await w.admin.model(blind, { can_read_images: false, can_read_pdf: false });
});
test.after(async () => w.stop());
test.before.each(() => w.mock.reset());
test.after.each(() => assert.is(w.mock.requests.length, 0, 'a refused request must not reach the provider'));

test('401 invalid_api_key: no key, a wrong key, a malformed bearer value', async () => {
  const base = { baseURL: `${w.svc.url}/v1`, maxRetries: 0 };
  const none = new OpenAI({ ...base, apiKey: 'unused', defaultHeaders: { authorization: null } });
  await expectSdk(none.chat.completions.create({ model: modelName, messages: hello }), { status: 401, code: 'invalid_api_key' });
  const wrong = new OpenAI({ ...base, apiKey: `svc_${'x'.repeat(40)}` });
  await expectSdk(wrong.chat.completions.create({ model: modelName, messages: hello }), { status: 401, code: 'invalid_api_key' });
  await checkRawError(await rawPost(w, { model: modelName, messages: hello }, { authorization: 'Basic Zm9vOmJhcg==' }), { status: 401, code: 'invalid_api_key' });
  const models = await fetch(`${w.svc.url}/v1/models`);
  await checkRawError(models, { status: 401, code: 'invalid_api_key' });
});

test("a person's session works with x-svc-workspace; a wrong or missing workspace is refused", async () => {
  const session = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.admin.token, maxRetries: 0 });
  const ok = await session.chat.completions.create({ model: modelName, messages: hello }).withResponse();
  assert.is(ok.response.status, 200);
  w.mock.reset();
  const header = (id: string) => ({ headers: { 'x-svc-workspace': id } });
  await expectSdk(session.chat.completions.create({ model: modelName, messages: hello }, header('ws_nope')), { status: 404, code: 'not_found', param: 'x-svc-workspace' });
  const second = await w.admin.workspace();
  await expectSdk(session.chat.completions.create({ model: modelName, messages: hello }), { status: 400, code: 'invalid_request', param: 'x-svc-workspace' });
  const { response } = await session.chat.completions.create({ model: modelName, messages: hello }, header(second)).withResponse();
  const row = await waitUsageRecord(w, response.headers.get('x-svc-request-id')!);
  assert.is(row.workspace_id, second);
  assert.is(row.key_id, null);
  w.mock.reset();
});

test('400 invalid_request: fields the spec refuses, each naming its param', async () => {
  const refused: Array<[Record<string, unknown>, string]> = [
    [{ n: 2 }, 'n'],
    [{ n: 0 }, 'n'],
    [{ functions: [{ name: 'f', parameters: {} }] }, 'functions'],
    [{ function_call: 'auto' }, 'function_call'],
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } } }, 'response_format'],
    [{ tool_choice: 'required' }, 'tool_choice'],
    [{ tool_choice: { type: 'function', function: { name: 'f' } } }, 'tool_choice'],
  ];
  for (const [fields, param] of refused) await expectSdk(call(fields), { status: 400, code: 'invalid_request', param });
});

test('400 invalid_request: wrong types, each naming its param', async () => {
  const refused: Array<[Record<string, unknown>, string]> = [
    [{ messages: 'Hello' }, 'messages'],
    [{ messages: { role: 'user', content: 'Hello' } }, 'messages'],
    [{ messages: [] }, 'messages'],
    [{ messages: undefined }, 'messages'],
    [{ model: 42 }, 'model'],
    [{ model: '' }, 'model'],
    [{ temperature: 'hot' }, 'temperature'],
    [{ temperature: 2.5 }, 'temperature'],
    [{ top_p: -0.1 }, 'top_p'],
    [{ max_tokens: -1 }, 'max_tokens'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ max_tokens: 1e300 }, 'max_tokens'],
    [{ max_tokens: '100' }, 'max_tokens'],
    [{ max_completion_tokens: -5 }, 'max_completion_tokens'],
    [{ stream: 'yes' }, 'stream'],
    [{ stream_options: { include_usage: 'yes' } }, 'stream_options'],
    [{ stop: 7 }, 'stop'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ tools: {} }, 'tools'],
    [{ tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools[0].function.name'],
    [{ messages: [{ role: 'robot', content: 'Hi' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: 'ok' }, 'not a message'] }, 'messages[1]'],
    [{ messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] }, 'messages[0].content[0].type'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }, 'messages[0].content[0].text'],
    [{ messages: [{ role: 'tool', content: 'sunny' }] }, 'messages[0].tool_call_id'],
    [{ messages: [{ role: 'assistant', content: null }] }, 'messages[0].content'],
    [{ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c' }] }] }, 'messages[0].tool_calls[0]'],
  ];
  for (const [fields, param] of refused) await expectSdk(call(fields), { status: 400, code: 'invalid_request', param });
});

test('400 invalid_request: bodies that are not a JSON object (raw)', async () => {
  for (const body of ['{"model": "x", "messages": [', '{model: "x"}', 'null', '[]', '"text"', '42', '']) {
    await checkRawError(await rawPost(w, body), { status: 400, code: 'invalid_request' });
  }
});

test('404 model_not_found: unknown models and routes', async () => {
  for (const model of ['local:no-such-model', 'route/x', 'gpt-4o', 'local:', `local:${upstreamId.toUpperCase()}`]) {
    await expectSdk(call({ model }), { status: 404, code: 'model_not_found', param: 'model' });
  }
});

test('422 provider_not_configured: the provider part names no provider', async () => {
  await expectSdk(call({ model: 'nowhere:some-model' }), { status: 422, code: 'provider_not_configured', param: 'model' });
  await expectSdk(call({ model: `LOCAL:${upstreamId}` }), { status: 422, code: 'provider_not_configured', param: 'model' });
});

test('422 no_model: auto with no routing plugin and no default model', async () => {
  await expectSdk(call({ model: 'auto' }), { status: 422, code: 'no_model', param: 'model' });
});

test('400 output_too_long: max_tokens or max_completion_tokens above the output limit (4096)', async () => {
  await expectSdk(call({ max_tokens: 4097 }), { status: 400, code: 'output_too_long', param: 'max_tokens' });
  await expectSdk(call({ max_completion_tokens: 100_000 }), { status: 400, code: 'output_too_long', param: 'max_completion_tokens' });
});

test('422 unsupported_input: an image or a PDF to a model that cannot read it', async () => {
  const image = [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: dataUrl('image/png', png()) } }] }];
  const e = await expectSdk(call({ model: blind, messages: image }), { status: 422, code: 'unsupported_input', param: 'messages' });
  assert.match(e.message, /image/);
  const doc = [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: dataUrl('application/pdf', pdf()) } }] }];
  const p = await expectSdk(call({ model: blind, messages: doc }), { status: 422, code: 'unsupported_input', param: 'messages' });
  assert.match(p.message, /PDF/);
});

test('a refusal is recorded with its status and code and costs nothing', async () => {
  const e = await expectSdk(call({ n: 3 }), { status: 400, code: 'invalid_request', param: 'n' });
  const row = await waitUsageRecord(w, e.headers!.get('x-svc-request-id')!);
  assert.is(Number(row.status), 400);
  assert.is(row.error_code, 'invalid_request');
  assert.is(Number(row.cost_micro_usd), 0);
  assert.is(row.workspace_id, w.workspaceId);
});

test('422 provider_not_configured: a model whose provider was removed (a world of its own)', async () => {
  const r = await startChatWorld();
  try {
    await r.client.chat.completions.create({ model: modelName, messages: hello });
    const del = await r.admin.call('DELETE', '/providers/local?confirm=local');
    assert.is(del.status, 200, JSON.stringify(del.body));
    r.mock.reset();
    const make = (stream: boolean) => r.client.chat.completions.create({ model: modelName, messages: hello, stream });
    await expectSdk(make(false), { status: 422, code: 'provider_not_configured', param: 'model' });
    await expectSdk(make(true), { status: 422, code: 'provider_not_configured', param: 'model' });
    assert.is(r.mock.requests.length, 0);
    const list = await r.client.models.list();
    assert.not.ok(list.data.some((m) => m.id === modelName), 'a model without its provider is not listed');
  } finally {
    await r.stop();
  }
});

test.run();
