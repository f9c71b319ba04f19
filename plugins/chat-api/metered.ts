import {
  toGatewayError,
  withItem,
  type AttemptRecord,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ProviderAdapter,
  type RequestContext,
  type UpstreamCall,
  type Usage,
} from '../../kernel/index.js';
import type { ReplyEnv } from './replies.js';
import { brokenOffUsage, producedText, producedUsage } from './usage.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'budget.overrun': { request_id: string; model: string; held_tokens: number; reported_tokens: number; excess_tokens: number };
  }
}

/**
 * A provider that reported more output than the call's limit (what its hold covers): logged as
 * `budget.overrun`, counted, and kept on the outcome for the trace.
 */
function overrun(ctx: RequestContext, env: ReplyEnv, call: UpstreamCall, usage: Usage): void {
  const held = call.request.maxTokens;
  const excess = usage.completion_tokens - held;
  if (excess <= 0) return;
  const outcome = ctx.state.outcome!;
  outcome.overrunTokens = (outcome.overrunTokens ?? 0) + excess;
  env.stats.counts.overruns++;
  env.stats.counts.overrunTokens += excess;
  env.log.warn('budget.overrun', { request_id: ctx.id, model: call.model.name, held_tokens: held, reported_tokens: usage.completion_tokens, excess_tokens: excess });
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
  constructor(private readonly counter: ReplyEnv['counter'], private readonly limit: number) {}

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

const replyText = (r: ChatCompletion): string => {
  const m = r.choices[0]?.message;
  return (m?.content ?? '') + (m?.tool_calls ?? []).map((t) => t.function.name + t.function.arguments).join('');
};

type Like = Pick<ChatCompletionChunk, 'id' | 'created' | 'model'>;
const lengthChunk = (like: Like): ChatCompletionChunk => ({
  id: like.id, object: 'chat.completion.chunk', created: like.created, model: like.model, choices: [{ index: 0, delta: {}, finish_reason: 'length', logprobs: null }],
});

/**
 * Every model call of a request goes through this adapter, and a tool loop makes several through
 * one (kernel/contracts/tools.ts). Per call: an attempt record (the trace's `upstream.attempt`
 * span); the hold's output rules (issue 9 item 3): a stream is cut once its output reaches the
 * call's max tokens (finish_reason `length`; a usage report beyond it is charged at the limit,
 * since every token passed on was counted), a whole reply reporting more is charged as reported
 * and logged `budget.overrun`; and the call's usage — reported, or for a stream that broke off
 * what the provider had reported by then and the tokenizer for the rest, or what it produced when
 * the provider reported none — added to `outcome.modelCalls` as soon as the call ends, so
 * whatever happens to the reply after it, the call is charged.
 */
export function metered(ctx: RequestContext, env: ReplyEnv, base: ProviderAdapter, retry: boolean): ProviderAdapter {
  return new MeteredAdapter(ctx, env, base, retry);
}

/** A class, not an object of closures: one object per attempt instead of seven functions and their context. */
class MeteredAdapter implements ProviderAdapter {
  constructor(
    private readonly ctx: RequestContext,
    private readonly env: ReplyEnv,
    private readonly base: ProviderAdapter,
    /** Whether the next call opened is a retry (only the attempt's first call can be). */
    private firstIsRetry: boolean,
  ) {}

  async complete(call: UpstreamCall): Promise<ChatCompletion> {
    const record = this.open(call);
    try {
      const reply = await this.base.complete(call);
      if (reply.usage) overrun(this.ctx, this.env, call, reply.usage);
      this.charge(call, reply.usage ?? producedUsage(this.env.counter, call.request, replyText(reply), call.request.maxTokens));
      this.end(record, call);
      return reply;
    } catch (err) {
      this.end(record, call, err);
      throw err;
    }
  }

  async stream(call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>> {
    const record = this.open(call);
    try {
      return cutAtLimit(this.ctx, this.env, call, await this.base.stream(call), (usage, err) => {
        this.charge(call, usage);
        this.end(record, call, err);
      });
    } catch (err) {
      this.end(record, call, err);
      throw err;
    }
  }

  check(signal: AbortSignal): ReturnType<ProviderAdapter['check']> {
    return this.base.check(signal);
  }

  close(): Promise<void> {
    return this.base.close();
  }

  private open(call: UpstreamCall): AttemptRecord {
    const outcome = this.ctx.state.outcome!;
    const record: AttemptRecord = { model: call.model.name, provider: call.model.provider, start: performance.now() - this.ctx.startedAt, end: 0, outcome: 'ok', retry: this.firstIsRetry };
    this.firstIsRetry = false;
    outcome.attempts = withItem(outcome.attempts, record);
    outcome.sent = true;
    return record;
  }

  private end(record: AttemptRecord, call: UpstreamCall, err?: unknown): void {
    record.end = performance.now() - this.ctx.startedAt;
    if (err !== undefined) record.outcome = call.signal.aborted ? 'aborted' : toGatewayError(err).code;
  }

  private charge(call: UpstreamCall, usage: Usage): void {
    const outcome = this.ctx.state.outcome!;
    outcome.modelCalls = withItem(outcome.modelCalls, { model: call.model, usage });
  }
}

/**
 * One call's stream with the output rule applied; `ended` gets the usage to charge (reported,
 * capped at the limit, or what was produced) and the error it ended with, once, however it ends
 * (finished, cut, broken off, or left by its reader).
 */
async function* cutAtLimit(
  ctx: RequestContext,
  env: ReplyEnv,
  call: UpstreamCall,
  upstream: AsyncIterable<ChatCompletionChunk>,
  ended: (usage: Usage, err?: unknown) => void,
): AsyncIterable<ChatCompletionChunk> {
  const max = call.request.maxTokens;
  const meter = new OutputMeter(env.counter, max);
  const iterator = upstream[Symbol.asyncIterator]();
  let usage: Usage | null = null;
  let failure: unknown;
  let finished = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const chunk = next.value;
      if (chunk.usage) {
        overrun(ctx, env, call, chunk.usage);
        usage = chunk.usage.completion_tokens > max ? { ...chunk.usage, completion_tokens: max, total_tokens: chunk.usage.prompt_tokens + max } : chunk.usage;
        chunk.usage = usage;
      }
      const full = meter.add(producedText(chunk));
      yield chunk;
      if (full && !chunk.choices.some((c) => c.finish_reason !== null)) {
        // The provider went on past the limit: stop reading, end this call with `length`.
        env.stats.counts.cutAtHold++;
        await iterator.return?.().catch(() => {});
        finished = true;
        const prompt = env.counter.input(call.request);
        usage = { prompt_tokens: prompt, completion_tokens: max, total_tokens: prompt + max };
        yield lengthChunk(chunk);
        yield { ...lengthChunk(chunk), choices: [], usage };
        return;
      }
    }
    finished = true;
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    if (!finished) await iterator.return?.().catch(() => {});
    ended(usage ?? brokenOffUsage(env.counter, call.request, meter.text, max, failure), failure);
  }
}
