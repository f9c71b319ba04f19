import {
  GatewayError,
  sendJson,
  toGatewayError,
  type ChatCompletion,
  type ChatCompletionChunk,
  type Lifecycle,
  type Logger,
  type ProviderAdapter,
  type RequestContext,
  type TokenCounter,
  type UpstreamCall,
} from '../../kernel/index.js';
import { replyHeaders } from './headers.js';
import { StreamWriter } from './stream-writer.js';
import type { Stats } from './stats.js';

/** What writing a reply needs besides the call. */
export interface ReplyEnv {
  lifecycle: Lifecycle;
  log: Logger;
  counter: TokenCounter;
  stats: Stats;
}

/** A whole reply (its model calls were charged as they ended: metered.ts). */
export function wholeReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall): Promise<void> {
  // One callback on the call's promise: an async function's suspended frame cost more, every request.
  return adapter.complete(call).then((completion) => writeWhole(ctx, call, completion));
}

function writeWhole(ctx: RequestContext, call: UpstreamCall, completion: ChatCompletion): void {
  const outcome = ctx.state.outcome!;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  outcome.responseModel = completion.model;
  outcome.finishReasons = completion.choices.map((c) => c.finish_reason ?? 'null');
  if (ctx.state.recordReply) ctx.state.reply = completion.choices[0]?.message.content ?? '';
  completion.model = call.model.name;
  outcome.status = 200;
  sendJson(ctx.res, 200, completion, replyHeaders(ctx, call.model));
}

/** What trace export and recording need from a chunk: the provider's model id, finish reasons, the text (recording on only). */
function noteChunk(ctx: RequestContext, chunk: ChatCompletionChunk): void {
  const outcome = ctx.state.outcome!;
  outcome.responseModel ??= chunk.model;
  for (const c of chunk.choices) {
    if (c.finish_reason) (outcome.finishReasons ??= [])[c.index] = c.finish_reason;
    if (ctx.state.recordReply && c.index === 0 && c.delta.content) ctx.state.reply = (ctx.state.reply ?? '') + c.delta.content;
  }
}

/**
 * A stream. Errors before the first chunk are thrown (the attempt loop may retry or fall back);
 * after it they end the stream with a final error event and are not thrown. The usage chunk goes
 * out only when the client asked for it. (The cut at the call's limit and the charge are the
 * adapter's: metered.ts.)
 */
export async function streamReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall, env: ReplyEnv): Promise<void> {
  const outcome = ctx.state.outcome!;
  const iterator = (await adapter.stream(call))[Symbol.asyncIterator]();
  let next = await iterator.next();
  const writer = new StreamWriter(ctx.res);
  writer.open(replyHeaders(ctx, call.model));
  outcome.status = 200;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  try {
    while (!next.done) {
      const chunk = next.value;
      noteChunk(ctx, chunk);
      chunk.model = call.model.name;
      if (call.request.includeUsage || !chunk.usage) await writer.chunk(chunk);
      else if (chunk.choices.length > 0) {
        delete chunk.usage;
        await writer.chunk(chunk);
      }
      next = await iterator.next();
    }
    writer.done();
  } catch (err) {
    const g = ctx.stopReason
      ? ctx.stopReason
      : env.lifecycle.expired.aborted
        ? new GatewayError('server_shutting_down', 'The service is restarting; the reply was cut short. Retry the request.')
        : toGatewayError(err);
    if (!outcome.clientClosed || ctx.stopReason) {
      outcome.errorCode = g.code;
      writer.error(g);
      if (g.code === 'stream_interrupted') {
        env.stats.counts.interrupted++;
        env.log.warn('request.failed', { request_id: ctx.id, status: g.status, code: g.code });
      }
    }
    await iterator.return?.().catch(() => {});
  }
}
