import { vendorError, type Behaviour } from './mock-upstream.js';

/**
 * The sixteen upstream faults of issue 19, as scripts for `MockUpstream.enqueue` (or its
 * `defaultBehaviour`). Each uses the vendors' real wire shapes: recorded error bodies, SSE framing.
 *
 * @example
 * mock.enqueue(faults.serverError()).enqueue(faults.ok('fine'));
 */
export const faults = {
  /** 1. A 429 naming its wait in Retry-After (seconds). */
  rateLimited: (seconds = 1): Behaviour => ({ error: { status: 429, headers: { 'retry-after': String(seconds) }, body: vendorError('openai-rate-limit').body } }),
  /** 2. A 429 with no header naming a wait (the body's text says nothing either). */
  rateLimitedBare: (): Behaviour => ({ error: { status: 429, body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } } } }),
  /** 3. One 500 (use once, then a good answer). */
  serverError: (): Behaviour => ({ error: vendorError('openai-server-error') }),
  /** 4. A 503 (as `defaultBehaviour`: down for good). */
  unavailable: (): Behaviour => ({ error: vendorError('openai-overloaded') }),
  /** 5. The connection reset before any response headers. */
  resetBeforeHeaders: (): Behaviour => ({ raw: (req) => req.socket.destroy() }),
  /** 6. Total silence: the request is read, nothing ever comes back. */
  silence: (): Behaviour => ({ hang: true }),
  /** 7. Headers at once, the first chunk only after `ms`. */
  slowFirstToken: (ms: number, chunks = ['slow ', 'answer']): Behaviour => ({ chunks, firstChunkDelayMs: ms }),
  /** 8. A stream cut (socket destroyed) after `after` chunks. */
  cutMidStream: (chunks: string[], after: number): Behaviour => ({ chunks, breakAfter: after }),
  /** 9. A stream that stalls after `after` chunks, connection open. */
  stall: (chunks: string[], after: number): Behaviour => ({ chunks, stallAfter: after }),
  /** 10. `count` unparsable events after `after` chunks, then the rest of a good stream. */
  malformed: (chunks: string[], after: number, count = 1): Behaviour => ({ chunks, malformedAfter: after, malformedCount: count }),
  /** 11. A complete stream (finish chunk and usage) that ends without `data: [DONE]`. */
  noDone: (chunks: string[]): Behaviour => ({ chunks, noDone: true }),
  /** 12. The provider's own context-length refusal. */
  contextTooLong: (): Behaviour => ({ error: vendorError('openai-context-length') }),
  /** 13. A safety refusal. */
  contentFilter: (): Behaviour => ({ error: vendorError('openai-content-filter') }),
  /** 14. A model that refuses a final assistant message (prefill), as Chat Completions servers do with a 400. */
  refusesPrefill: (): Behaviour => ({
    error: { status: 400, body: { error: { message: 'This model does not support assistant message prefill. The conversation must end with a user message.', type: 'invalid_request_error', param: 'messages', code: null } } },
  }),
  /** 15. Down (503) until `until` (ms epoch), then answering; use as `defaultBehaviour`. */
  downUntil: (until: number, content = 'back again'): Behaviour => ({
    raw: (_req, res, record) => {
      if (Date.now() < until) {
        const e = vendorError('openai-overloaded');
        res.writeHead(e.status, { 'content-type': 'application/json' }).end(JSON.stringify(e.body));
        return;
      }
      answer(res, record.body, content);
    },
  }),
  /** 16. A misbehaving upstream for fail-over accounting: reports `completion` output tokens whatever the limit, streams `words` words. */
  overReports: (completion: number, words = 600): Behaviour => ({
    chunks: Array.from({ length: words }, (_, i) => `${i % 2 ? 'budget' : 'hold'} `),
    reportUsage: { prompt_tokens: 20, completion_tokens: completion },
  }),
  /** A plain good answer. */
  ok: (content = 'Hello from the mock.'): Behaviour => ({ reply: { content } }),
};

/** A minimal good reply for `raw` scripts, whole or streamed as the request asked. */
function answer(res: import('node:http').ServerResponse, body: { stream?: boolean; model?: string } | undefined, content: string): void {
  const head = { id: 'chatcmpl-back', created: Math.floor(Date.now() / 1000), model: body?.model ?? 'mock-model' };
  const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
  if (!body?.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }], usage }));
    return;
  }
  const chunk = (delta: object, finish: string | null) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content }, null))}\n\n`);
  res.write(`data: ${JSON.stringify(chunk({}, 'stop'))}\n\n`);
  res.end(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`);
}
