import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  isGatewayError,
  RequestAbort,
  type CatalogModel,
  type ChatCompletionChunk,
  type ChatMessage,
  type ChatRequest,
  type ErrorCode,
  type ProviderAdapter,
  type UpstreamCall,
} from '../../kernel/index.js';

/**
 * The provider contract suite (providers/README.md): what every vendor adapter must do, whatever
 * its wire format. A vendor test supplies a harness that scripts its own upstream stand-in and
 * calls `providerContract(test, harness)` on its uvu suite.
 */

/** A catalog model as the dispatcher hands it to an adapter. */
export function testModel(upstreamId = 'mock-model', provider = 'local'): CatalogModel {
  return {
    name: `${provider}:${upstreamId}`,
    provider,
    upstreamId,
    displayName: upstreamId,
    contextWindow: 8192,
    outputLimit: 1024,
    inputMicroUsdPerMTok: 1_000_000,
    outputMicroUsdPerMTok: 2_000_000,
    canReadImages: false,
    canReadPdf: false,
    canCallTools: true,
    createdAt: new Date(0),
  };
}

/** One upstream call with a resolved max_tokens. */
/** History with a reply stopped for an approval (no text, no calls) before the continued one. */
export const stoppedReplyHistory: ChatMessage[] = [
  { role: 'user', content: 'Delete item 42' },
  { role: 'assistant', content: null },
  { role: 'assistant', content: '' },
  { role: 'assistant', content: 'Item 42 is deleted.' },
  { role: 'user', content: 'Thanks' },
];

export function testCall(model: CatalogModel, over: Partial<ChatRequest> = {}, signal: AbortSignal = new AbortController().signal): UpstreamCall {
  const request: ChatRequest & { maxTokens: number } = {
    model: model.name,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream: false,
    includeUsage: false,
    maxTokens: 256,
    ...over,
  } as ChatRequest & { maxTokens: number };
  return { model, request, signal: RequestAbort.following(signal) };
}

/** Collects a stream; a failure is returned with what arrived before it. */
export async function drain(stream: AsyncIterable<ChatCompletionChunk>): Promise<{ chunks: ChatCompletionChunk[]; text: string; error?: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const c of stream) chunks.push(c);
  } catch (error) {
    return { chunks, text: textOf(chunks), error };
  }
  return { chunks, text: textOf(chunks) };
}

export const textOf = (chunks: ChatCompletionChunk[]): string => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** Asserts a GatewayError with this code; returns it for further checks. */
export async function rejectsWith(p: Promise<unknown>, code: ErrorCode): Promise<Record<string, unknown> & { code: string; status: number; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isGatewayError(err), `expected a GatewayError ${code}, got ${String(err)}`);
    assert.is((err as { code: string }).code, code);
    return err as never;
  }
  assert.unreachable(`expected a rejection with ${code}`);
  return undefined as never;
}

export type FailureKind = 'auth' | 'context' | 'unavailable';
const expected: Record<FailureKind, ErrorCode> = { auth: 'provider_auth_failed', context: 'context_length_exceeded', unavailable: 'upstream_unavailable' };

/** How a vendor test scripts its upstream for the contract. Each method scripts the next call. */
export interface ContractHarness {
  adapter(): ProviderAdapter;
  model: CatalogModel;
  reply(text: string, usage: { prompt_tokens: number; completion_tokens: number }): void;
  stream(pieces: string[], usage: { prompt_tokens: number; completion_tokens: number }): void;
  failBefore(kind: FailureKind): void;
  /** Stream `pieces`, then break the connection after `n` of them. */
  breakAfter(pieces: string[], n: number): void;
}

export function providerContract(test: Test, harness: () => ContractHarness): void {
  const usage = { prompt_tokens: 11, completion_tokens: 7 };

  test('contract: a whole reply is a chat.completion with content, finish_reason and usage', async () => {
    const h = harness();
    h.reply('All good.', usage);
    const reply = await h.adapter().complete(testCall(h.model));
    assert.is(reply.object, 'chat.completion');
    assert.is(reply.choices[0]?.message.content, 'All good.');
    assert.is(reply.choices[0]?.finish_reason, 'stop');
    assert.equal(reply.usage, { ...usage, total_tokens: 18 });
  });

  test('contract: a stream yields chunks in order and ends with the usage chunk', async () => {
    const h = harness();
    h.stream(['One', ' two', ' three'], usage);
    const { chunks, text, error } = await drain(await h.adapter().stream(testCall(h.model, { stream: true })));
    assert.is(error, undefined);
    assert.is(text, 'One two three');
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
    assert.equal(chunks.at(-1)?.usage, { ...usage, total_tokens: 18 });
  });

  for (const kind of ['auth', 'context', 'unavailable'] as const) {
    test(`contract: a ${kind} failure before the first chunk is an ordinary ${expected[kind]} error`, async () => {
      const h = harness();
      h.failBefore(kind);
      await rejectsWith(h.adapter().stream(testCall(h.model, { stream: true })), expected[kind]);
      h.failBefore(kind);
      await rejectsWith(h.adapter().complete(testCall(h.model)), expected[kind]);
    });
  }

  test('contract: a stream that breaks off after its first chunks throws stream_interrupted', async () => {
    const h = harness();
    h.breakAfter(['a', 'b', 'c', 'd'], 2);
    const { text, error } = await drain(await h.adapter().stream(testCall(h.model, { stream: true })));
    assert.is(text, 'ab');
    assert.ok(isGatewayError(error));
    assert.is((error as { code: string }).code, 'stream_interrupted');
  });

  test('contract: check() answers connected for a reachable provider', async () => {
    const h = harness();
    assert.is(await h.adapter().check(AbortSignal.timeout(5000)), 'connected');
  });
}
