import type { Logger, Principal, RequestContext, ToolCall } from '../../kernel/index.js';
import type { Approvals } from './approvals.js';
import type { ToolCatalog, WorkspaceTool } from './catalog.js';
import { callTool, ToolServerFailure } from './mcp.js';
import type { CallRecords } from './records.js';

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

  async run(call: ToolCall, approved: { approvalId: string } | null, signal: AbortSignal): Promise<CallResult> {
    const tool = this.offered.byName.get(call.function.name);
    const argsText = call.function.arguments ?? '';
    if (!tool) return { text: told.unavailable };
    const base = { requestId: this.ctx.id, workspaceId: this.principal.workspaceId, personId: this.principal.personId, serverId: tool.server.id, tool: tool.name, argumentsText: argsText };
    if (!(await this.env.catalog.originAllowed(tool.server.url))) {
      await this.env.records.add({ ...base, outcome: 'denied', durationMs: 0 });
      return { text: told.denied };
    }
    if (!approved && tool.needsApproval && !(await this.env.approvals.granted(this.principal, tool.server.id, tool.name))) return { approvalNeeded: tool };
    const args = parseArgs(argsText);
    const approvalId = approved?.approvalId ?? null;
    if (!args) {
      await this.env.records.add({ ...base, outcome: 'error', durationMs: 0, approvalId });
      return { text: told.badArguments };
    }
    const started = performance.now();
    try {
      const address = await this.env.catalog.address(tool.server);
      const r = await callTool(address, this.env.limits, signal, tool.name, args);
      await this.env.records.add({ ...base, outcome: r.isError ? 'error' : 'ok', durationMs: performance.now() - started, approvalId });
      const text = cut(r.text, this.env.limits.resultChars);
      return { text: r.isError ? `The tool reported an error: ${text}` : text };
    } catch (err) {
      if (signal.aborted && !(err instanceof ToolServerFailure)) throw signal.reason;
      const kind = err instanceof ToolServerFailure ? err.kind : 'protocol';
      this.env.log.warn('tools.call_failed', { request_id: this.ctx.id, server_id: tool.server.id, kind });
      await this.env.records.add({ ...base, outcome: 'error', durationMs: performance.now() - started, approvalId });
      return { text: told[kind] };
    }
  }
}

export async function recordPending(env: RunnerEnv, runner: Runner, call: ToolCall, approvalId: string): Promise<void> {
  const tool = runner.offered.byName.get(call.function.name)!;
  const { ctx, principal } = runner;
  await env.records.add({
    requestId: ctx.id, workspaceId: principal.workspaceId, personId: principal.personId, serverId: tool.server.id, tool: tool.name,
    argumentsText: call.function.arguments ?? '', outcome: 'pending', durationMs: 0, approvalId,
  });
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
