import type { Logger, Principal, RequestContext, ToolCall, ToolCallSpan } from '../../kernel/index.js';
import type { Approvals } from './approvals.js';
import type { ToolCatalog, WorkspaceTool } from './catalog.js';
import { callTool, ToolServerFailure } from './mcp.js';
import type { CallOutcome, CallRecords } from './records.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'tools.call_failed': { request_id: string; server_id: string; kind: string };
  }
}

export interface RunnerEnv {
  catalog: ToolCatalog;
  records: CallRecords;
  approvals: Approvals;
  log: Logger;
  limits: { maxBytes: number; timeoutMs: number; resultChars: number; maxSteps: number };
}

/** The workspace tools one request offers, by the function name the model sees. */
export interface OfferedTools {
  byName: Map<string, WorkspaceTool>;
  /** The same tools by server id and MCP name (to continue a loop stopped in another request). */
  byKey: Map<string, { name: string; tool: WorkspaceTool }>;
}

export const keyOf = (serverId: string, tool: string): string => `${serverId}\u0000${tool}`;

/** What the model is told; these texts carry nothing from the tool server (docs/TOOLS-NOTES.md). */
const told = {
  denied: 'This tool cannot be used: its server is not on the instance administrators\' allow-list.',
  unavailable: 'This tool is not available any more.',
  badArguments: 'The tool was not called: its arguments are not a JSON object.',
  refused: 'The user refused this tool call.',
  timeout: 'The tool did not answer in time.',
  too_large: 'The tool\'s answer was too large to use.',
  redirect: 'The tool server answered with a redirect, which is not followed.',
  unreachable: 'The tool server could not be reached.',
  protocol: 'The tool call failed.',
  // Command-line (stdio) tools run in the sandbox service (stdio.ts):
  sandbox_unavailable: 'This tool cannot be used right now: the sandbox that runs command-line tools is not available.',
  sandbox_busy: 'This tool cannot be used right now: the sandbox that runs command-line tools is busy. Try again later.',
  start_failed: 'The tool\'s server could not be started.',
  memory_limit: 'The tool ran out of memory.',
  sign_in: 'This tool cannot be used right now: its server needs a workspace administrator to sign in to it again.',
} as const;
export const refusedText = told.refused;

export type CallResult = { text: string } | { approvalNeeded: WorkspaceTool };

/**
 * Runs one workspace tool call for the model and records it. Every failure becomes a result the
 * model reads (never an error for the client); server texts of failures are not passed on, and
 * nothing of the arguments or results is logged.
 */
export class Runner {
  constructor(
    readonly env: RunnerEnv,
    readonly ctx: RequestContext,
    readonly principal: Principal,
    readonly offered: OfferedTools,
  ) {}

  /** `ready` is awaited just before the tool really runs (it may throw: nothing runs then). */
  async run(call: ToolCall, approved: { approvalId: string } | null, signal: AbortSignal, ready: () => Promise<unknown>): Promise<CallResult> {
    const tool = this.offered.byName.get(call.function.name);
    if (!tool) return { text: told.unavailable };
    if (!(await this.env.catalog.allowed(tool.server))) {
      await this.note(call, tool, 'denied', performance.now(), null);
      return { text: told.denied };
    }
    if (!approved && tool.needsApproval && !(await this.env.approvals.granted(this.principal, tool.server.id, tool.name))) return { approvalNeeded: tool };
    const args = parseArgs(call.function.arguments ?? '');
    const approvalId = approved?.approvalId ?? null;
    if (!args) {
      await this.note(call, tool, 'error', performance.now(), approvalId);
      return { text: told.badArguments };
    }
    await ready();
    const started = performance.now();
    try {
      const address = await this.env.catalog.address(tool.server);
      const r = await callTool(address, this.env.limits, signal, tool.name, args);
      await this.note(call, tool, r.isError ? 'error' : 'ok', started, approvalId);
      const text = cut(r.text, this.env.limits.resultChars);
      return { text: r.isError ? `The tool reported an error: ${text}` : text };
    } catch (err) {
      if (signal.aborted && !(err instanceof ToolServerFailure)) throw signal.reason;
      const kind = err instanceof ToolServerFailure ? err.kind : 'protocol';
      this.env.log.warn('tools.call_failed', { request_id: this.ctx.id, server_id: tool.server.id, kind });
      await this.note(call, tool, 'error', started, approvalId);
      return { text: told[kind] };
    }
  }

  /**
   * Writes the call's record (arguments' size and hash only) and adds its span to the request's
   * trace (kernel/contracts/tools.ts ToolCallSpan): ids, names, outcome, size and times, never
   * the arguments or the result.
   */
  async note(call: ToolCall, tool: WorkspaceTool, outcome: CallOutcome, started: number, approvalId: string | null): Promise<void> {
    await this.record(call, tool.server.id, tool.name, outcome, started, approvalId);
  }

  /**
   * A call refused by `x-svc-deny` in this request: its own record and span, `refused` (the
   * stopped request's record stays `pending`, with the answer beside it).
   */
  async noteRefused(call: ToolCall, approval: { id: string; serverId: string; tool: string }): Promise<void> {
    await this.record(call, approval.serverId, approval.tool, 'refused', performance.now(), approval.id);
  }

  private async record(call: ToolCall, serverId: string, tool: string, outcome: CallOutcome, started: number, approvalId: string | null): Promise<void> {
    const ended = performance.now();
    const argumentsText = call.function.arguments ?? '';
    const { ctx, principal } = this;
    const recordId = await this.env.records.add({
      requestId: ctx.id, workspaceId: principal.workspaceId, personId: principal.personId, serverId, tool, argumentsText, outcome, durationMs: ended - started, approvalId,
    });
    this.span(call, serverId, tool, outcome, started, ended, { recordId, approvalId });
  }

  private span(call: ToolCall, serverId: string, tool: string, outcome: CallOutcome, started: number, ended: number, ids: Pick<ToolCallSpan, 'recordId' | 'approvalId'>): void {
    const at = this.ctx.startedAt;
    (this.ctx.state.toolCalls ??= []).push({
      serverId, tool, functionName: call.function.name, outcome, argumentsBytes: Buffer.byteLength(call.function.arguments ?? '', 'utf8'), start: started - at, end: ended - at, ...ids,
    });
  }
}

export async function recordPending(runner: Runner, call: ToolCall, approvalId: string): Promise<void> {
  await runner.note(call, runner.offered.byName.get(call.function.name)!, 'pending', performance.now(), approvalId);
}

function parseArgs(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A result longer than the limit is cut there, and says so. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[result cut at ${max} characters]`;
}
