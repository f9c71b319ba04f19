import { sumUsage, type ChatCompletion, type ChatCompletionChunk, type ProviderAdapter, type RequestContext, type ToolCall, type ToolLoop, type UpstreamCall, type Usage, type CallSignal } from '../../kernel/index.js';
import { pendingCompletion, zeroUsage, type Pending, type Turns } from './turns.js';

type Like = Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'>;
type DeltaCall = NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number];
type Finish = ChatCompletionChunk['choices'][number]['finish_reason'];

/**
 * The server-side tool loop (kernel/contracts/tools.ts) around one upstream adapter, which is
 * dispatch's per-call adapter: each model call of the loop is its own attempt span, is cut at its
 * own max tokens when streamed, and is charged as it ends. Before each call the request's hold is
 * made to cover it (`state.hold.cover`); a cap without room ends the reply with budget_exceeded
 * (README "Budgets"). After `maxSteps` tool rounds the model is asked once more without the
 * workspace tools. A step that ends with finish_reason `length` ends the reply there: its tool
 * calls may be cut short, so none of them is run.
 */
export class ServerToolLoop implements ToolLoop {
  /** Whether the provider reported usage: only then does the reply carry the loop's summed usage. */
  private sawUsage = false;

  constructor(
    private readonly ctx: RequestContext,
    private readonly turns: Turns,
    private readonly maxSteps: number,
  ) {}

  wrap(inner: ProviderAdapter): ProviderAdapter {
    return {
      complete: (call) => this.complete(inner, call),
      stream: (call) => this.stream(inner, call),
      check: (signal) => inner.check(signal),
      close: () => inner.close(),
    };
  }

  private request(call: UpstreamCall, step: number): UpstreamCall {
    const request: UpstreamCall['request'] = { ...call.request, messages: [...call.request.messages, ...this.turns.added] };
    if (step >= this.maxSteps) {
      const own = (request.tools ?? []).filter((t) => !this.turns.isWorkspace(t.function.name));
      if (own.length) request.tools = own;
      else {
        delete request.tools;
        delete request.tool_choice;
      }
    }
    return { ...call, request };
  }

  private checkStopped(signal: CallSignal): void {
    if (this.ctx.stopReason) throw this.ctx.stopReason;
    if (signal.aborted) throw signal.reason;
  }

  /**
   * Step `step`'s call as the messages stand, once the request's hold covers it (throws
   * budget_exceeded when a cap has no room). Also asked before a turn's tools run, with their
   * results still missing: a lower bound of that call, so a loop that cannot go on stops before
   * running tools whose results it could not use.
   */
  private async held(call: UpstreamCall, step: number): Promise<UpstreamCall> {
    this.checkStopped(call.signal);
    const next = this.request(call, step);
    await this.ctx.state.hold?.cover(next);
    this.checkStopped(call.signal);
    return next;
  }

  /** Every model call of the request so far, as charged (reported when the provider reports usage). */
  private usage(): Usage | undefined {
    return this.sawUsage ? (sumUsage(this.ctx.state.outcome?.modelCalls ?? []) ?? undefined) : undefined;
  }

  private async complete(inner: ProviderAdapter, call: UpstreamCall): Promise<ChatCompletion> {
    const first = await this.turns.start(call.signal.abortSignal, () => this.held(call, 0));
    // Stopped again before any model call (the rest of the turn needs another approval): nothing to charge.
    if (first.pending) return pendingCompletion({ id: `chatcmpl-${this.ctx.id}`, created: Math.floor(Date.now() / 1000), model: call.model.name }, null, zeroUsage(), first.pending);
    for (let step = 0; ; step++) {
      const reply = await inner.complete(await this.held(call, step));
      this.sawUsage ||= reply.usage !== undefined;
      const usage = this.usage();
      if (usage) reply.usage = usage;
      const choice = reply.choices[0];
      const message = choice?.message;
      const calls = message?.tool_calls ?? [];
      const mine = calls.filter((c) => this.turns.isWorkspace(c.function.name));
      if (mine.length === 0) return reply;
      if (mine.length < calls.length || step >= this.maxSteps || choice!.finish_reason === 'length') {
        // A turn that also calls the client's tools goes back to the client, without svc's own calls.
        message!.tool_calls = calls.filter((c) => !this.turns.isWorkspace(c.function.name));
        if (message!.tool_calls.length === 0) {
          delete message!.tool_calls;
          if (choice!.finish_reason !== 'length') choice!.finish_reason = 'stop';
        }
        return reply;
      }
      this.turns.added.push({ role: 'assistant', content: message?.content ?? null, tool_calls: mine });
      const r = await this.turns.turn(mine, call.signal.abortSignal, () => this.held(call, step + 1));
      if (r.pending) return pendingCompletion(reply, message?.content ?? null, this.usage(), r.pending);
    }
  }

  private async stream(inner: ProviderAdapter, call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>> {
    const first = await this.turns.start(call.signal.abortSignal, () => this.held(call, 0));
    if (first.pending) return this.pendingOnly(call, first.pending);
    const upstream = await inner.stream(await this.held(call, 0));
    return this.steps(inner, call, upstream);
  }

  private async *pendingOnly(call: UpstreamCall, pending: Pending): AsyncIterable<ChatCompletionChunk> {
    const like = { id: `chatcmpl-${this.ctx.id}`, object: 'chat.completion.chunk' as const, created: Math.floor(Date.now() / 1000), model: call.model.name };
    yield { ...like, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
    yield* this.ending(like, zeroUsage(), pending);
  }

  /** The end of a stream that stops for an approval: finish, usage, then the chunk carrying `svc.pending_approval`. */
  private *ending(like: Like, usage: Usage | null, pending: Pending): Iterable<ChatCompletionChunk> {
    yield { ...like, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    if (usage) yield { ...like, choices: [], usage };
    yield { ...like, choices: [], svc: { pending_approval: pending } };
  }

  /**
   * One client stream over every model call of the loop: deltas of workspace tool calls are held
   * back (never shown to the client), the held turn runs while the stream stays open, and the
   * next model call's chunks follow. Usage is sent once, at the end: every call's, summed.
   */
  private async *steps(inner: ProviderAdapter, call: UpstreamCall, firstStream: AsyncIterable<ChatCompletionChunk>): AsyncIterable<ChatCompletionChunk> {
    let upstream = firstStream;
    // Replaced by the first chunk's own id and time; used as is only if the model sent no chunk.
    let like: Like = { id: `chatcmpl-${this.ctx.id}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: call.model.name };
    let named = false;
    let opened = false;
    for (let step = 0; ; step++) {
      const calls = new Map<number, { call: ToolCall; mine: boolean }>();
      let text = '';
      let held: ChatCompletionChunk | null = null;
      let ended: Finish = null;
      for await (const chunk of upstream) {
        if (!named) {
          like = { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
          named = true;
        }
        if (chunk.usage) {
          this.sawUsage = true;
          delete chunk.usage;
          if (chunk.choices.length === 0) continue;
        }
        const choice = chunk.choices[0];
        text += choice?.delta?.content ?? '';
        ended = choice?.finish_reason ?? ended;
        if (choice?.delta?.tool_calls) {
          const shown = choice.delta.tool_calls.filter((d) => !this.collect(calls, d));
          if (shown.length) choice.delta.tool_calls = shown;
          else delete choice.delta.tool_calls;
        }
        const mine = [...calls.values()].some((c) => c.mine);
        if (choice?.finish_reason && mine) {
          held = chunk;
          continue;
        }
        if (choice && !choice.finish_reason && Object.keys(choice.delta ?? {}).length === 0) {
          // The client's stream opens with the first chunk, even one whose only delta was held back.
          if (opened) continue;
          choice.delta = { role: 'assistant' };
        }
        opened = true;
        yield chunk;
      }
      const all = [...calls.values()];
      const mine = all.filter((c) => c.mine).map((c) => c.call);
      const usage = this.usage();
      if (mine.length === 0 || mine.length < all.length || step >= this.maxSteps || ended === 'length') {
        // The client's own calls (or a cut) keep the provider's finish; svc's calls alone end as a stop.
        if (held) yield mine.length < all.length || ended === 'length' ? held : { ...like, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
        if (usage) yield { ...like, choices: [], usage };
        return;
      }
      this.turns.added.push({ role: 'assistant', content: text || null, tool_calls: mine });
      const r = await this.turns.turn(mine, call.signal.abortSignal, () => this.held(call, step + 1));
      if (r.pending) {
        yield* this.ending(like, usage ?? null, r.pending);
        return;
      }
      upstream = await inner.stream(await this.held(call, step + 1));
    }
  }

  /** Adds a tool-call delta to its call; true when it belongs to a workspace tool (so it is held back). */
  private collect(calls: Map<number, { call: ToolCall; mine: boolean }>, d: DeltaCall): boolean {
    let entry = calls.get(d.index);
    if (!entry) {
      const name = d.function?.name ?? '';
      entry = { call: { id: d.id ?? '', type: 'function', function: { name, arguments: '' } }, mine: this.turns.isWorkspace(name) };
      calls.set(d.index, entry);
    }
    entry.call.function.arguments += d.function?.arguments ?? '';
    return entry.mine;
  }
}
