import OpenAI from 'openai';
import * as assert from 'uvu/assert';
import { startWorld, type World } from '../support/provision.js';
import { assertSchema } from '../support/openapi.js';
import { png, pdf } from '../chat/files.js';

/**
 * Shared setup of the native vendors' end-to-end tests (anthropic-e2e, google-e2e): a service
 * whose built-in provider points at the vendor's mock, with an instance key set through the admin
 * API, and the official `openai` client (no retries of its own) as the caller.
 */

export interface NativeWorld {
  w: World;
  client: OpenAI;
  stop(): Promise<void>;
}

/** Starts svc with `provider`'s address overridden to `mockUrl` and `apiKey` set as its instance key. */
export async function nativeWorld(provider: string, mockUrl: string, apiKey: string): Promise<NativeWorld> {
  const w = await startWorld({ plugins: { catalog: { config: { builtInAddresses: { [provider]: mockUrl } } } } });
  const set = await w.admin.ok<{ has_key: boolean; check: string }>('PATCH', `/providers/${provider}`, { api_key: apiKey });
  assert.equal([set.has_key, set.check], [true, 'connected']);
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.apiKey, maxRetries: 0 });
  return { w, client, stop: () => w.stop() };
}

export const pngUrl = (): string => `data:image/png;base64,${png().toString('base64')}`;
export const pdfUrl = (): string => `data:application/pdf;base64,${pdf().toString('base64')}`;

/** A streamed reply read through the SDK: text, tool calls by index, finish reason, usage, and the error that ended it. */
export async function readStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let error: InstanceType<typeof OpenAI.APIError> | undefined;
  try {
    for await (const c of stream) {
      assertSchema('CreateChatCompletionStreamResponse', c);
      if (c.usage) usage = c.usage;
      const choice = c.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      for (const t of choice.delta.tool_calls ?? []) {
        const call = (calls[t.index] ??= { id: '', name: '', arguments: '' });
        call.id += t.id ?? '';
        call.name += t.function?.name ?? '';
        call.arguments += t.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    error = err;
  }
  return { text, finish, usage, calls, error };
}
