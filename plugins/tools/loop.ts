import type { ChatCompletion, ChatCompletionChunk, ProviderAdapter, RequestContext, ToolCall, ToolLoop, UpstreamCall, Usage } from '../../kernel/index.js';
import { addUsage, pendingCompletion, zeroUsage, type Pending, type Turns } from './turns.js';

type Like = Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'>;
type DeltaCall = NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number];

/**
 * The server-side tool loop (kernel/contracts/tools.ts) around one upstream adapter. Each model
 * call of the loop is a real upstream call; their usage is summed into the reply's usage, which
 * is what the budgets plugin charges at settle (README "Budgets"). After `maxSteps` tool rounds
 * the model is asked once more without the workspace tools.
 */
export class ServerToolLoop implements ToolLoop {
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

  private checkStopped(signal: AbortSignal): void {
    if (this.ctx.stopped.aborted) throw this.ctx.stopped.reason;
    if (signal.aborted) throw signal.reason;
  }

  private async complete(inner: ProviderAdapter, call: UpstreamCall): Promise<ChatCompletion> {
    const first = await this.turns.start(call.signal);
    const total = zeroUsage();
    let sawUsage = false;
    // Stopped again before any model call (the rest of the turn needs another approval): nothing to charge.
    if (first.pending) return pendingCompletion({ id: `chatcmpl-${this.ctx.id}`, created: Math.floor(Date.now() / 1000), model: call.model.name }, null, zeroUsage(), first.pending);
    for (let step = 0; ; step++) {
      this.checkStopped(call.signal);
      const reply = await inner.complete(this.request(call, step));
      sawUsage = addUsage(total, reply.usage) || sawUsage;
      if (sawUsage) reply.usage = { ...total };
      const message = reply.choices[0]?.message;
      const calls = message?.tool_calls ?? [];
      const mine = calls.filter((c) => this.turns.isWorkspace(c.function.name));
      if (mine.length === 0) return reply;
      if (mine.length < calls.length || step >= this.maxSteps) {
        // A turn that also calls the client's tools goes back to the client, without svc's own calls.
        message!.tool_calls = calls.filter((c) => !this.turns.isWorkspace(c.function.name));
        if (message!.tool_calls.length === 0) {
          delete message!.tool_calls;
          reply.choices[0]!.finish_reason = 'stop';
        }
        return reply;
      }
      this.turns.added.push({ role: 'assistant', content: message?.content ?? null, tool_calls: mine });
      const r = await this.turns.turn(mine, call.signal);
      if (r.pending) return pendingCompletion(reply, message?.content ?? null, sawUsage ? { ...total } : undefined, r.pending);
    }
  }

  private async stream(inner: ProviderAdapter, call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>> {
    const first = await this.turns.start(call.signal);
    if (first.pending) return this.pendingOnly(call, first.pending);
    const upstream = await inner.stream(this.request(call, 0));
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
   * next model call's chunks follow. Usage is summed and sent once, at the end.
   */
  private async *steps(inner: ProviderAdapter, call: UpstreamCall, firstStream: AsyncIterable<ChatCompletionChunk>): AsyncIterable<ChatCompletionChunk> {
    const total = zeroUsage();
    let sawUsage = false;
    let upstream = firstStream;
    // Replaced by the first chunk's own id and time; used as is only if the model sent no chunk.
    let like: Like = { id: `chatcmpl-${this.ctx.id}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: call.model.name };
    let named = false;
    let opened = false;
    for (let step = 0; ; step++) {
      const calls = new Map<number, { call: ToolCall; mine: boolean }>();
      let text = '';
      let held: ChatCompletionChunk | null = null;
      for await (const chunk of upstream) {
        if (!named) {
          like = { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
          named = true;
        }
        if (chunk.usage) {
          sawUsage = addUsage(total, chunk.usage) || sawUsage;
          delete chunk.usage;
          if (chunk.choices.length === 0) continue;
        }
        const choice = chunk.choices[0];
        text += choice?.delta?.content ?? '';
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
      const finish = (reason: ChatCompletionChunk['choices'][number]['finish_reason']): ChatCompletionChunk => ({ ...like, choices: [{ index: 0, delta: {}, finish_reason: reason }] });
      if (mine.length === 0 || mine.length < all.length || step >= this.maxSteps) {
        if (held) yield mine.length < all.length ? held : finish('stop');
        if (sawUsage) yield { ...like, choices: [], usage: { ...total } };
        return;
      }
      this.turns.added.push({ role: 'assistant', content: text || null, tool_calls: mine });
      const r = await this.turns.turn(mine, call.signal);
      if (r.pending) {
        yield* this.ending(like, sawUsage ? { ...total } : null, r.pending);
        return;
      }
      this.checkStopped(call.signal);
      upstream = await inner.stream(this.request(call, step + 1));
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
