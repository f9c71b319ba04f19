import type { ChatCompletion, ChatMessage, Principal, RequestContext, ToolCall, Usage } from '../../kernel/index.js';
import type { Approval, Approvals, PausedLoop } from './approvals.js';
import { recordPending, refusedText, type Runner } from './runner.js';

/** SPEC.md Pending approval body: `svc.pending_approval`. */
export interface Pending {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** What running a turn of workspace calls gave: the loop goes on, or waits for an approval. */
export type TurnResult = { pending: Pending } | { pending: null };

/**
 * The tool steps of one request's loop: runs a turn's workspace calls in order, adding each result
 * to `added` (the messages the loop adds after the client's), and stops at the first call that
 * needs an approval, storing where the loop stopped. Results of calls already run in this request
 * are reused, so a retried model call does not run a tool twice.
 */
export class Turns {
  readonly added: ChatMessage[] = [];
  private readonly done = new Map<string, string>();
  private prefix?: Promise<TurnResult>;
  /** The answered approval's call ran, or its refusal went to the model (README "Approvals"). */
  private answered = false;

  constructor(
    private readonly ctx: RequestContext,
    private readonly principal: Principal,
    private readonly conversationId: string,
    private readonly runner: Runner,
    private readonly approvals: Approvals,
    private readonly resume: { approval: Approval; approve: boolean } | null,
  ) {}

  isWorkspace(name: string): boolean {
    return this.runner.offered.byName.has(name);
  }

  /** Whether the answered approval took effect: its call ran or was refused to the model. */
  get resumed(): boolean {
    return this.answered;
  }

  /**
   * The answered approval's call (run or refused) and the rest of its turn, once per request.
   * `ready` runs once before the first tool that really runs (the loop checks there that the next
   * model call fits the budgets, so no tool runs whose result could not be used; a call stopped
   * for approval or refused runs nothing and needs no check).
   */
  start(signal: AbortSignal, ready: () => Promise<unknown>): Promise<TurnResult> {
    return (this.prefix ??= this.continueStopped(signal, ready));
  }

  private async continueStopped(signal: AbortSignal, ready: () => Promise<unknown>): Promise<TurnResult> {
    if (!this.resume) return { pending: null };
    const { approval, approve } = this.resume;
    const { paused } = approval;
    this.added.push(...paused.steps);
    // The stopped request's names map back to server and tool, whatever this request calls them.
    const current = this.runner.offered.byKey.get(`${approval.serverId}\u0000${approval.tool}`);
    const call = current ? { ...paused.call, function: { ...paused.call.function, name: current.name } } : paused.call;
    if (!approve) await this.runner.noteRefused(call, approval);
    const text = approve ? await this.runOne(call, { approvalId: approval.id }, signal, once(ready)) : refusedText;
    this.answered = true;
    this.added.push({ role: 'tool', tool_call_id: paused.call.id, content: text ?? refusedText });
    const rest = paused.rest.map((c) => rename(c, paused.names, this.runner));
    return this.turn(rest, signal, ready);
  }

  /** Runs `calls` (all workspace calls of one assistant turn, already in `added`), `ready` first (see `start`). */
  async turn(calls: ToolCall[], signal: AbortSignal, ready: () => Promise<unknown>): Promise<TurnResult> {
    const first = once(ready);
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (this.ctx.stopReason) throw this.ctx.stopReason;
      const memo = `${call.function.name}\u0000${call.function.arguments}`;
      let text = this.done.get(memo);
      if (text === undefined) {
        const r = await this.runner.run(call, null, signal, first);
        if ('approvalNeeded' in r) return { pending: await this.pause(call, calls.slice(i + 1), r.approvalNeeded.server.id, r.approvalNeeded.name) };
        text = r.text;
        this.done.set(memo, text);
      }
      this.added.push({ role: 'tool', tool_call_id: call.id, content: text });
    }
    return { pending: null };
  }

  private async runOne(call: ToolCall, approved: { approvalId: string }, signal: AbortSignal, ready: () => Promise<unknown>): Promise<string> {
    const r = await this.runner.run(call, approved, signal, ready);
    return 'text' in r ? r.text : refusedText;
  }

  private async pause(call: ToolCall, rest: ToolCall[], serverId: string, tool: string): Promise<Pending> {
    const names: PausedLoop['names'] = {};
    for (const [name, t] of this.runner.offered.byName) names[name] = { serverId: t.server.id, tool: t.name };
    const id = await this.approvals.create(this.principal, this.conversationId, serverId, tool, { steps: [...this.added], call, rest, names });
    await recordPending(this.runner, call, id);
    return { id, tool: call.function.name, arguments: parseObject(call.function.arguments) };
  }
}

/** `fn` run at most once; later calls get the same promise. */
function once(fn: () => Promise<unknown>): () => Promise<unknown> {
  let done: Promise<unknown> | undefined;
  return () => (done ??= fn());
}

function rename(call: ToolCall, names: PausedLoop['names'], runner: Runner): ToolCall {
  const was = names[call.function.name];
  const now = was && runner.offered.byKey.get(`${was.serverId}\u0000${was.tool}`);
  return now ? { ...call, function: { ...call.function, name: now.name } } : call;
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export const zeroUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** The whole reply that stops for an approval: the model's words so far, no tool calls, and `svc.pending_approval`. */
export function pendingCompletion(like: Pick<ChatCompletion, 'id' | 'created' | 'model'>, content: string | null, usage: Usage | undefined, pending: Pending): ChatCompletion {
  return {
    id: like.id, object: 'chat.completion', created: like.created, model: like.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    ...(usage ? { usage } : {}),
    svc: { pending_approval: pending },
  };
}
