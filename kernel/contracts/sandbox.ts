import { defineToken } from '../container/tokens.js';

/**
 * What to start in a sandbox slot: a command from the sandbox's allow-list (`SVC_SANDBOX_COMMANDS`,
 * e.g. `node`, `npx`) and its arguments (the tool server's package and options). The environment
 * holds the tool server's own settings; it is passed to the tool server only, never logged.
 */
export interface SandboxStart {
  command: string;
  args: readonly string[];
  env?: Readonly<Record<string, string>>;
  /**
   * The largest MCP message either way for this call, below the sandbox's own limit
   * (`SVC_SANDBOX_MAX_MESSAGE_BYTES`): a tool server printing more ends with `message_too_large`
   * before the message leaves the sandbox.
   */
  maxMessageBytes?: number;
}

/** Why a sandboxed call ended (the sandbox's `exit` frame). */
export type SandboxExitReason = 'exited' | 'closed' | 'time_limit' | 'memory_limit' | 'message_too_large' | 'start_failed' | 'no_free_slot' | 'unreachable';

export interface SandboxExit {
  reason: SandboxExitReason;
  /** The tool server's exit code when it exited by itself. */
  code: number | null;
}

/**
 * One call: a fresh tool server in a fresh slot, speaking MCP JSON-RPC over stdio. Shaped like the
 * MCP SDK's `Transport` (start, send, close, onmessage, onclose, onerror), so the tools plugin can
 * hand it to an SDK `Client` as is. Closing it ends the tool server and wipes the slot.
 *
 * @example
 * const session = sandbox.open({ command: 'npx', args: ['-y', '@acme/mcp-server'] });
 * session.onmessage = (m) => handle(m);
 * await session.start();
 * await session.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
 * const exit = await session.exited; // { reason: 'closed', code: null } after close()
 */
export interface SandboxSession {
  start(): Promise<void>;
  send(message: unknown): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Settles when the call ended, with the reason; never rejects. */
  readonly exited: Promise<SandboxExit>;
}

/** Whether the main service reaches a service (diagnostics' sandbox.json). */
export type Reach = 'reachable' | 'unreachable' | 'not_configured';

/** One allow-list entry of the egress proxy; `allowPrivate` lets it reach private, loopback or link-local addresses. */
export interface EgressAllowEntry {
  host: string;
  port: number;
  allowPrivate?: boolean;
}

/**
 * The main service's side of the sandbox and egress services (plugin `sandbox`). The main service
 * never depends on them: when either is down, `open` ends with `unreachable` and only command-line
 * tool servers fail.
 *
 * @example
 * const sandbox = ctx.resolve(SandboxClientToken);
 * const { sandbox: s, egress } = await sandbox.reachability(); // for diagnostics' sandbox.json
 * await sandbox.setEgressAllowList([{ host: 'api.github.com', port: 443 }]);
 */
export interface SandboxClient {
  /** Whether an address for the sandbox is set (SVC_SANDBOX_URL); without one every call ends `unreachable`. */
  readonly configured: boolean;
  open(start: SandboxStart): SandboxSession;
  reachability(): Promise<{ sandbox: Reach; egress: Reach }>;
  /** Replaces the egress proxy's allow-list (instance admins' setting, pushed by whoever owns it). */
  setEgressAllowList(entries: readonly EgressAllowEntry[]): Promise<void>;
}

export const SandboxClientToken = defineToken<SandboxClient>('sandbox.client');
