import { NativeAdapter, type NativeSettings, type NativeWire, type ProviderAdapter } from '../../kernel/index.js';
import { toGeminiRequest } from './request.js';
import { fromGeminiReply } from './reply.js';
import { GeminiStream } from './stream.js';
import { geminiError, keyRefused } from './errors.js';

/**
 * The Gemini API wire: `POST {address}/models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse` for server-sent events; `GET {address}/models` for the check;
 * the key in `x-goog-api-key` (never in the URL, where proxies and logs would keep it).
 */
export function geminiWire(settings: NativeSettings): NativeWire {
  const headers = (accept: string): Record<string, string> => {
    const h: Record<string, string> = { accept };
    if (settings.apiKey) h['x-goog-api-key'] = settings.apiKey;
    return h;
  };
  return {
    request: (call, stream) => ({
      path: `/models/${encodeURIComponent(call.model.upstreamId)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      headers: { ...headers(stream ? 'text/event-stream' : 'application/json'), 'content-type': 'application/json' },
      body: toGeminiRequest(call),
    }),
    models: () => ({ path: '/models', headers: headers('application/json') }),
    keyRefused,
    error: geminiError,
    reply: (json, ctx) => fromGeminiReply(json, ctx),
    translator: () => new GeminiStream(),
  };
}

/** The adapter for Google's native Gemini API. */
export function geminiAdapter(settings: NativeSettings): ProviderAdapter {
  return new NativeAdapter(settings, geminiWire(settings));
}
