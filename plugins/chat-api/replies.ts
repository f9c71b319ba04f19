import {
  GatewayError,
  sendJson,
  toGatewayError,
  type ChatCompletionChunk,
  type Lifecycle,
  type Logger,
  type ProviderAdapter,
  type RequestContext,
  type TokenCounter,
  type UpstreamCall,
  type Usage,
} from '../../kernel/index.js';
import { replyHeaders } from './headers.js';
import { StreamWriter } from './stream-writer.js';
import { producedText, producedUsage } from './usage.js';
import type { Stats } from './stats.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'budget.overrun': { request_id: string; model: string; held_tokens: number; reported_tokens: number; excess_tokens: number };
  }
}

/** What writing a reply needs besides the call. */
export interface ReplyEnv {
  lifecycle: Lifecycle;
  log: Logger;
  counter: TokenCounter;
  stats: Stats;
}

/**
 * A provider that reported more output than the request's limit (what the hold covers): logged as
 * `budget.overrun`, counted, and kept on the outcome for the trace.
 */
function overrun(ctx: RequestContext, env: ReplyEnv, call: UpstreamCall, usage: Usage): void {
  const held = call.request.maxTokens;
  const excess = usage.completion_tokens - held;
  if (excess <= 0) return;
  ctx.state.outcome!.overrunTokens = excess;
  env.stats.counts.overruns++;
  env.stats.counts.overrunTokens += excess;
  env.log.warn('budget.overrun', { request_id: ctx.id, model: call.model.name, held_tokens: held, reported_tokens: usage.completion_tokens, excess_tokens: excess });
}

/** A whole reply: charged as the provider reported it, even beyond the hold (issue 9 item 3). */
export async function wholeReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall, env: ReplyEnv): Promise<void> {
  const completion = await adapter.complete(call);
  const outcome = ctx.state.outcome!;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  outcome.responseModel = completion.model;
  outcome.finishReasons = completion.choices.map((c) => c.finish_reason ?? 'null');
  if (ctx.state.recordReply) ctx.state.reply = completion.choices[0]?.message.content ?? '';
  completion.model = call.model.name;
  if (completion.usage) {
    overrun(ctx, env, call, completion.usage);
    outcome.usage = completion.usage;
  } else {
    const m = completion.choices[0]?.message;
    const text = (m?.content ?? '') + (m?.tool_calls ?? []).map((t) => t.function.name + t.function.arguments).join('');
    outcome.usage = producedUsage(env.counter, call.request, text, call.request.maxTokens);
  }
  outcome.status = 200;
  sendJson(ctx.res, 200, completion, replyHeaders(ctx, call.model));
}

/**
 * Counts a stream's output against its limit cheaply: a UTF-16 unit is at most three UTF-8 bytes
 * and a byte-level tokenizer never makes more tokens than bytes, so nothing is tokenized until the
 * text could have reached the limit; then each piece is counted, and the whole text only when the
 * pieces' sum (which can only over-count) reaches it.
 */
class OutputMeter {
  private readonly pieces: string[] = [];
  private chars = 0;
  private sum = 0;
  constructor(private readonly counter: TokenCounter, private readonly limit: number) {}

  get text(): string {
    return this.pieces.join('');
  }

  /** True once the output produced reached the limit. */
  add(piece: string): boolean {
    if (!piece) return false;
    this.pieces.push(piece);
    this.chars += piece.length;
    if (this.chars * 3 < this.limit) return false;
    this.sum += this.counter.text(piece);
    if (this.sum < this.limit) return false;
    this.sum = this.counter.text(this.text);
    return this.sum >= this.limit;
  }
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

function lengthChunk(like: ChatCompletionChunk): ChatCompletionChunk {
  return { id: like.id, object: 'chat.completion.chunk', created: like.created, model: like.model, choices: [{ index: 0, delta: {}, finish_reason: 'length', logprobs: null }] };
}

/**
 * A stream. Errors before the first chunk are thrown (the attempt loop may retry or fall back);
 * after it they end the stream with a final error event and are not thrown. A stream whose output
 * reaches the request's limit is cut there with finish_reason `length` (a provider that ignores
 * `max_tokens` cannot spend beyond the hold); a usage report beyond the limit is charged at the
 * limit, since every token the client received was counted.
 */
export async function streamReply(ctx: RequestContext, adapter: ProviderAdapter, call: UpstreamCall, env: ReplyEnv): Promise<void> {
  const outcome = ctx.state.outcome!;
  const iterator = (await adapter.stream(call))[Symbol.asyncIterator]();
  let next = await iterator.next();
  const writer = new StreamWriter(ctx.res);
  writer.open(replyHeaders(ctx, call.model));
  outcome.status = 200;
  outcome.firstTokenMs = Math.round(performance.now() - ctx.startedAt);
  const max = call.request.maxTokens;
  const meter = new OutputMeter(env.counter, max);
  let usage: Usage | null = null;
  let cut = false;
  try {
    while (!next.done) {
      const chunk = next.value;
      noteChunk(ctx, chunk);
      chunk.model = call.model.name;
      if (chunk.usage) {
        overrun(ctx, env, call, chunk.usage);
        usage = chunk.usage.completion_tokens > max ? { ...chunk.usage, completion_tokens: max, total_tokens: chunk.usage.prompt_tokens + max } : chunk.usage;
        chunk.usage = usage;
      }
      const full = meter.add(producedText(chunk));
      if (call.request.includeUsage || !chunk.usage) await writer.chunk(chunk);
      else if (chunk.choices.length > 0) {
        delete chunk.usage;
        await writer.chunk(chunk);
      }
      if (full && !chunk.choices.some((c) => c.finish_reason !== null)) {
        cut = true;
        break;
      }
      next = await iterator.next();
    }
    if (cut) {
      env.stats.counts.cutAtHold++;
      (outcome.finishReasons ??= [])[0] = 'length';
      await iterator.return?.().catch(() => {});
      await writer.chunk(lengthChunk(next.value as ChatCompletionChunk));
      usage = { prompt_tokens: env.counter.input(call.request), completion_tokens: max, total_tokens: 0 };
      usage.total_tokens = usage.prompt_tokens + max;
      if (call.request.includeUsage) await writer.chunk({ ...lengthChunk(next.value as ChatCompletionChunk), choices: [], usage });
    }
    writer.done();
  } catch (err) {
    const g = ctx.stopped.aborted
      ? toGatewayError(ctx.stopped.reason)
      : env.lifecycle.expired.aborted
        ? new GatewayError('server_shutting_down', 'The service is restarting; the reply was cut short. Retry the request.')
        : toGatewayError(err);
    if (!outcome.clientClosed || ctx.stopped.aborted) {
      outcome.errorCode = g.code;
      writer.error(g);
      if (g.code === 'stream_interrupted') {
        env.stats.counts.interrupted++;
        env.log.warn('request.failed', { request_id: ctx.id, status: g.status, code: g.code });
      }
    }
    await iterator.return?.().catch(() => {});
  } finally {
    outcome.usage = usage ?? producedUsage(env.counter, call.request, meter.text, max);
  }
}
