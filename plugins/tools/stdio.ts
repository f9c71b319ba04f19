import type { Client, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { SandboxExitReason, SandboxSession } from '../../kernel/index.js';
import { mcp, ToolServerFailure } from './mcp.js';
import { revisions } from './revisions.js';

/**
 * How svc reaches a command-line (stdio) server: it never does itself. Each listing or call opens
 * one sandbox call (`svc sandbox`, plugin `sandbox`), a fresh tool server in a fresh slot, and
 * closes it at the end; `open` is null when no sandbox is set up.
 */
export interface StdioAddress {
  transport: 'stdio';
  /** The registered server: what this replica learnt about its revision is kept under it (revisions.ts). */
  serverId: string;
  /** The command line (never the environment): names the server for what this replica learnt about it. */
  key: string;
  open(maxMessageBytes: number): SandboxSession | null;
}

/** What each way a sandboxed call ends means for the model (runner.ts words it). */
const failureOf: Record<Exclude<SandboxExitReason, 'closed'>, ToolServerFailure['kind']> = {
  unreachable: 'sandbox_unavailable',
  no_free_slot: 'sandbox_busy',
  start_failed: 'start_failed',
  time_limit: 'timeout',
  memory_limit: 'memory_limit',
  message_too_large: 'too_large',
  exited: 'protocol',
};

/**
 * A sandbox session as the MCP SDK's Transport. `start` gives way to the caller's deadline (the
 * sandbox may queue a call for a free slot), and `ready` tells a sandbox that never started the
 * tool server (down, stopped, overloaded) from a tool server that was too slow.
 */
class SandboxTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  ready = false;

  constructor(readonly session: SandboxSession, private readonly deadline: AbortSignal) {
    session.onmessage = (m) => this.onmessage?.(m as JSONRPCMessage);
    session.onerror = (e) => this.onerror?.(e);
    session.onclose = () => this.onclose?.();
  }

  async start(): Promise<void> {
    let stop = (): void => {};
    const aborted = new Promise<never>((_, reject) => {
      stop = () => reject(this.deadline.reason);
      if (this.deadline.aborted) stop();
      else this.deadline.addEventListener('abort', stop, { once: true });
    });
    aborted.catch(() => {});
    try {
      await Promise.race([this.session.start(), aborted]);
      this.ready = true;
    } finally {
      this.deadline.removeEventListener('abort', stop);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.session.send(message);
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

/**
 * Tool servers that end themselves on a request before `initialize` (some SDKs do) cannot take
 * the version-negotiation probe in place; such a command line is asked again with `initialize`
 * only, and remembered on this replica (bounded, keyed by command and arguments, never env).
 */
const legacyOnly = new Set<string>();

/**
 * One short-lived MCP session with a command-line server in the sandbox: connect, run `fn`, close
 * (which ends the tool server and wipes its slot). Bounded like a remote session by `timeoutMs`;
 * each way it can fail becomes a ToolServerFailure whose kind says why, never the server's text.
 */
export async function withStdioServer<T>(addr: StdioAddress, limits: { maxBytes: number; timeoutMs: number }, signal: AbortSignal, fn: (c: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const both = AbortSignal.any([signal, timeout]);
  const once = async (mode: 'auto' | 'legacy'): Promise<T> => {
    const session = addr.open(limits.maxBytes);
    if (!session) throw new ToolServerFailure('sandbox_unavailable');
    const transport = new SandboxTransport(session, both);
    const { Client } = await mcp();
    const client = new Client({ name: 'svc', version: '1.0.0' }, { versionNegotiation: { mode } });
    let connected = false;
    // The revision learnt at an earlier call saves the probe (revisions.ts); `legacy` mode never probes.
    const prior = mode === 'auto' ? revisions.prior(addr.serverId) : undefined;
    try {
      await client.connect(transport, { signal: both, timeout: limits.timeoutMs, ...(prior ? { prior } : {}) });
      connected = true;
      if (mode === 'auto' && !prior) revisions.learn(addr.serverId, client);
      return await fn(client, both);
    } catch (err) {
      if (err instanceof ToolServerFailure) throw err;
      if (signal.aborted && !timeout.aborted) throw signal.reason;
      // The exit frame settles `exited` before the SDK hears of the close, so an ended call is known here.
      const exit = await Promise.race([session.exited, Promise.resolve(null)]);
      if (exit && exit.reason !== 'closed') {
        if (mode === 'auto' && exit.reason === 'exited' && !connected && transport.ready && !timeout.aborted) throw new RetryLegacy();
        throw new ToolServerFailure(failureOf[exit.reason]);
      }
      if (timeout.aborted) throw new ToolServerFailure(transport.ready ? 'timeout' : 'sandbox_unavailable');
      revisions.forget(addr.serverId); // it may speak another revision now: the next call probes again
      throw new ToolServerFailure('protocol');
    } finally {
      await client.close().catch(() => {});
    }
  };
  if (legacyOnly.has(addr.key)) return once('legacy');
  try {
    return await once('auto');
  } catch (err) {
    if (!(err instanceof RetryLegacy)) throw err;
    if (legacyOnly.size >= 1000) legacyOnly.clear();
    legacyOnly.add(addr.key);
    return once('legacy');
  }
}

class RetryLegacy extends Error {}
