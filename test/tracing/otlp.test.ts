import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { StoreToken } from '../../kernel/index.js';
import { shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { startWorld, type World } from '../support/provision.js';
import { modelName, upstreamId } from '../chat/setup.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const test = suite(`tracing: OTLP/HTTP trace export (${shape})`);
const prompt = 'canary-otlp-prompt-3c1d';
const reply = 'canary-otlp-reply-9e4f';

interface ExportWorld extends World {
  mock: MockUpstream;
  client: OpenAI;
}

async function world(env: NodeJS.ProcessEnv): Promise<ExportWorld> {
  const mock = await new MockUpstream({ apiKey: 'sk-otlp-upstream' }).start();
  const w = await startWorld({ plugins: { retention: { config: { schedule: '' } } } }, env);
  await w.admin.provider('local', mock.url, 'sk-otlp-upstream');
  await w.admin.model(modelName);
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  return { ...w, mock, client, stop: async () => (await w.stop(), await mock.stop()) };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

const spanOf = (r: OtlpReceiver, id: string): ReceivedSpan | undefined => r.spans.find((s) => s.attributes['svc.request_id'] === id);

test('spans reach the collector with the GenAI attributes and svc.* ones, with SVC_OTLP_HEADERS; never text', async () => {
  const receiver = await new OtlpReceiver().start();
  const w = await world({ SVC_OTLP_ENDPOINT: receiver.url, SVC_OTLP_HEADERS: 'authorization=Bearer%20canary-otlp-token,x-tenant=t1' });
  try {
    w.mock.enqueue({ chunks: [reply], usage: { prompt_tokens: 11, completion_tokens: 7 } });
    const whole = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: prompt }] }).withResponse();
    w.mock.enqueue({ chunks: reply.split('-'), usage: { prompt_tokens: 12, completion_tokens: 5 } });
    const streamed = await w.client.chat.completions.create({ model: modelName, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: prompt }] }).withResponse();
    for await (const _ of streamed.data) void _;
    const refused = await fetch(`${w.svc.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nobody:nothing', messages: [{ role: 'user', content: prompt }] }),
    });
    assert.is(refused.status, 422);
    const ids = [whole.response, streamed.response, refused].map((r) => r.headers.get('x-svc-request-id')!);
    await until(() => ids.every((id) => spanOf(receiver, id)));

    const s = spanOf(receiver, ids[0]!)!;
    assert.ok(s, 'the span of the whole reply arrived');
    assert.is(s.name, `chat ${modelName}`);
    assert.is(s.resource['service.name'], 'svc');
    const a = s.attributes;
    assert.is(a['gen_ai.operation.name'], 'chat');
    assert.is(a['gen_ai.provider.name'], 'local');
    assert.is(a['gen_ai.request.model'], modelName);
    assert.is(a['gen_ai.response.model'], upstreamId);
    assert.is(a['gen_ai.usage.input_tokens'], 11);
    assert.is(a['gen_ai.usage.output_tokens'], 7);
    assert.equal(a['gen_ai.response.finish_reasons'], ['stop']);
    assert.is(a['svc.workspace_id'], w.workspaceId);
    assert.is(a['svc.routing_rule'], 'explicit');
    assert.is(a['svc.outcome'], 'ok');
    assert.is(a['svc.status'], 200);
    assert.ok((a['svc.hold_micro_usd'] as number) > 0);
    assert.ok((a['svc.phase.dispatch.duration_us'] as number) >= 0);
    const [usage] = await w.svc.service.get(StoreToken).execute<{ cost: number | string }>('select cost_micro_usd as cost from usage_records where id = ?', [ids[0]]);
    assert.is(a['svc.cost_micro_usd'], Number(usage!.cost));
    assert.ok(Number(usage!.cost) > 0);

    const st = spanOf(receiver, ids[1]!)!.attributes;
    assert.is(st['svc.stream'], true);
    assert.is(st['gen_ai.usage.input_tokens'], 12);
    assert.equal(st['gen_ai.response.finish_reasons'], ['stop']);

    const r = spanOf(receiver, ids[2]!)!;
    assert.is(r.status.code, 2);
    assert.is(r.attributes['error.type'], 'provider_not_configured');
    assert.is(r.attributes['svc.outcome'], 'refused');
    assert.is(r.attributes['gen_ai.response.model'], undefined);

    assert.is(receiver.headers[0]!.authorization, 'Bearer canary-otlp-token');
    assert.is(receiver.headers[0]!['x-tenant'], 't1');
    const raw = receiver.bodies.join('\n');
    for (const text of [prompt, reply, 'canary-otlp-reply', 'canary-otlp-token', 'sk-otlp-upstream', new URL(w.mock.url).host]) assert.not.ok(raw.includes(text), `exported ${text}`);
    assert.not.ok(w.svc.logs.text.includes('canary-otlp-token'));
  } finally {
    await w.stop();
    await receiver.stop();
  }
});

test('SVC_OTLP_ENDPOINT unset: nothing is sent, whatever OTEL_* variables say', async () => {
  const receiver = await new OtlpReceiver().start();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' };
  const saved = Object.fromEntries(Object.keys(otel).map((k) => [k, process.env[k]]));
  Object.assign(process.env, otel);
  const w = await world(otel);
  try {
    w.mock.enqueue({ chunks: [reply] });
    await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: prompt }] });
    // Longer than the export delay (1 s) with room to spare: an exporter would have sent by now.
    await new Promise((r) => setTimeout(r, 2500));
  } finally {
    await w.stop();
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
  assert.is(receiver.bodies.length, 0);
  await receiver.stop();
});

test('a collector that never answers, or is not there, does not fail requests or hold shutdown', async () => {
  const hung = await new OtlpReceiver().start();
  hung.hang = true;
  for (const endpoint of [hung.url, 'http://127.0.0.1:9']) {
    const w = await world({ SVC_OTLP_ENDPOINT: endpoint });
    try {
      for (let i = 0; i < 5; i++) {
        w.mock.enqueue({ chunks: [reply] });
        const r = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: prompt }] });
        assert.is(r.choices[0]!.message.content, reply);
      }
      await new Promise((r) => setTimeout(r, 1200)); // let an export start against the dead collector
    } finally {
      await w.stop();
    }
  }
  assert.ok(hung.bodies.length >= 1, 'the hung collector was reached');
  await hung.stop();
});

test.run();
