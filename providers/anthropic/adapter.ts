import { NativeAdapter, type NativeSettings, type NativeWire, type ProviderAdapter } from '../../kernel/index.js';
import { toAnthropicRequest } from './request.js';
import { fromAnthropicReply } from './reply.js';
import { AnthropicStream } from './stream.js';
import { anthropicError, refusesSampling } from './errors.js';

/** The Messages API version sent with every call (README.md says why this one). */
export const anthropicVersion = '2023-06-01';

/**
 * The Anthropic Messages wire: `POST {address}/messages`, `GET {address}/models` for the check,
 * the key in `x-api-key` and the pinned `anthropic-version`.
 */
export function anthropicWire(settings: NativeSettings): NativeWire {
  const headers = (accept: string): Record<string, string> => {
    const h: Record<string, string> = { accept, 'anthropic-version': anthropicVersion };
    if (settings.apiKey) h['x-api-key'] = settings.apiKey;
    return h;
  };
  return {
    request: (call, stream, relaxed) => ({
      path: '/messages',
      headers: { ...headers(stream ? 'text/event-stream' : 'application/json'), 'content-type': 'application/json' },
      body: toAnthropicRequest(call, stream, relaxed),
    }),
    relaxOn: refusesSampling,
    models: () => ({ path: '/models', headers: headers('application/json') }),
    keyRefused: (status) => status === 401 || status === 403,
    error: anthropicError,
    reply: (json) => fromAnthropicReply(json),
    translator: () => new AnthropicStream(),
  };
}

/** The adapter for Anthropic's native Messages API. */
export function anthropicAdapter(settings: NativeSettings): ProviderAdapter {
  return new NativeAdapter(settings, anthropicWire(settings));
}
