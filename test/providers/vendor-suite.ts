import OpenAI from 'openai';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChatCompletionChunk, ProviderAdapter, ProviderFactory } from '../../kernel/index.js';
import { MockUpstream, type Behaviour } from '../support/mock-upstream.js';
import { vendorErrorFixture, vendorFailure } from '../support/mock-vendors.js';
import { assertSchema } from '../support/openapi.js';
import { startWorld, type World } from '../support/provision.js';
import { providerContract, testModel } from './contract.js';

/** What a built-in OpenAI-format vendor's tests share: its factory and the recorded errors for the contract's failures. */
export interface VendorSpec {
  factory: ProviderFactory;
  /** Error fixture names (providers/<vendor>/__fixtures__/<name>.error.json) for a refused key and a context overflow. */
  authError: string;
  contextError: { vendor: string; name: string };
  /** How this vendor streams scripted pieces (default: the mock's OpenAI manner, usage when asked). */
  stream?: (pieces: string[], usage: { prompt_tokens: number; completion_tokens: number }) => Behaviour;
}

export const vendorKey = 'sk-vendor-canary-5d1e';
export const vendorTimeouts = { connectMs: 1000, firstByteMs: 2000, idleMs: 500 };

/**
 * Adapter-level harness: the vendor's adapter against the OpenAI-format mock (which checks the
 * key), and the shared contract suite with the vendor's own recorded error bodies.
 */
export function vendorAdapterSuite(test: Test, spec: VendorSpec): { mock: () => MockUpstream; adapter: () => ProviderAdapter } {
  const vendor = spec.factory.vendor;
  let mock: MockUpstream;
  const made: ProviderAdapter[] = [];
  const adapter = (): ProviderAdapter => {
    const a = spec.factory.create({ name: vendor, address: mock.url, apiKey: vendorKey, timeouts: vendorTimeouts });
    made.push(a);
    return a;
  };
  test.before.each(async () => {
    mock = await new MockUpstream({ apiKey: vendorKey }).start();
  });
  test.after.each(async () => {
    await Promise.all(made.splice(0).map((a) => a.close()));
    await mock.stop();
  });
  providerContract(test, () => ({
    adapter,
    model: testModel('mock-model', vendor),
    reply: (content, usage) => mock.enqueue({ reply: { content, usage } }),
    stream: (chunks, usage) => mock.enqueue(spec.stream ? spec.stream(chunks, usage) : { chunks, usage }),
    failBefore: (kind) =>
      mock.enqueue({
        error:
          kind === 'auth'
            ? vendorErrorFixture(vendor, spec.authError)
            : kind === 'context'
              ? vendorErrorFixture(spec.contextError.vendor, spec.contextError.name)
              : { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } },
      }),
    breakAfter: (chunks, n) => mock.enqueue({ chunks, breakAfter: n }),
  }));
  return { mock: () => mock, adapter };
}

/** A running service whose built-in `vendor` points at a mock upstream, with its instance key set, and an SDK client. */
export interface VendorWorld extends World {
  mock: MockUpstream;
  client: OpenAI;
}

export async function startVendorWorld(vendor: string): Promise<VendorWorld> {
  const mock = await new MockUpstream({ apiKey: vendorKey }).start();
  let world: World;
  try {
    // These suites test each vendor's error mapping: one attempt, no retries (the attempt loop has its own tests).
    world = await startWorld({ plugins: { catalog: { config: { builtInAddresses: { [vendor]: mock.url } } }, 'chat-api': { config: { upstream: { retries: 0 } } } } });
  } catch (err) {
    await mock.stop();
    throw err;
  }
  await world.admin.ok('PATCH', `/providers/${vendor}`, { api_key: vendorKey });
  const client = new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 });
  return {
    ...world,
    mock,
    client,
    stop: async () => {
      await world.stop();
      await mock.stop();
    },
  };
}

/**
 * The end-to-end suite of a built-in vendor: one service per suite with the vendor's built-in
 * pointed at a mock upstream (key set), started before its tests and stopped after.
 */
export function vendorE2E(vendor: string, title: string): { test: Test; w: () => VendorWorld } {
  const test = suite(title);
  let world: VendorWorld;
  test.before(async () => {
    world = await startVendorWorld(vendor);
  });
  test.after(async () => {
    await world.stop();
  });
  return { test, w: () => world };
}

/** Collects a stream through the SDK; each chunk must validate against the wire schema. */
export async function collect(stream: AsyncIterable<unknown>): Promise<{ chunks: ChatCompletionChunk[]; text: string; error?: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const c of stream) {
      assertSchema('CreateChatCompletionStreamResponse', c);
      chunks.push(c as ChatCompletionChunk);
    }
  } catch (error) {
    return { chunks, text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), error };
  }
  return { chunks, text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join('') };
}

/**
 * The usage of a stream as the OpenAI format sends it with `include_usage` (SPEC.md "usage
 * chunk"): exactly one chunk carries usage, it is the last one and has `choices: []`; no chunk
 * with choices carries any, so a client that sums usage over chunks counts it once.
 */
export function assertUsageChunk(chunks: ChatCompletionChunk[], usage: ChatCompletionChunk['usage']): void {
  const withUsage = chunks.filter((c) => c.usage);
  assert.is(withUsage.length, 1, `one chunk with usage, not ${withUsage.length}`);
  assert.is(withUsage[0], chunks.at(-1), 'the usage chunk is the last one');
  assert.equal(withUsage[0]!.choices, []);
  assert.equal(withUsage[0]!.usage, usage);
  assert.ok(chunks.some((c) => c.choices[0]?.finish_reason), 'a finish chunk before it');
}

/**
 * A vendor's recorded "unknown model" body, whole and streamed, through svc: 502
 * provider_model_not_found naming the provider and the model id sent (SPEC.md).
 */
export async function expectModelNotFound(w: VendorWorld, fixture: string, model: string): Promise<void> {
  const [provider, upstreamId] = [model.slice(0, model.indexOf(':')), model.slice(model.indexOf(':') + 1)];
  for (const stream of [false, true]) {
    w.mock.enqueue(vendorFailure(provider, fixture));
    const e = await refused(w.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, stream }), 502, 'provider_model_not_found');
    assert.equal((e.error as { svc?: unknown }).svc, { provider, model: upstreamId });
    assert.match(e.message, upstreamId);
  }
}

/** Asserts the SDK rejected with this HTTP status and `error.code`. */
export async function refused(p: Promise<unknown>, status: number, code: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    assert.is(e.status, status, e.message);
    assert.is(e.code, code, e.message);
    return e;
  }
  assert.unreachable(`expected ${status} ${code}`);
  return undefined as never;
}

/** A one-pixel PNG as a data URL (images must reach the vendor as sent). */
export const pixel = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export const weatherTool = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Weather at a place', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};
