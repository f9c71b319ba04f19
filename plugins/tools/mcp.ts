import type { AuthProvider, Client } from '@modelcontextprotocol/client';
import { cappedFetch } from './capped-fetch.js';
import { revisions } from './revisions.js';
import { endSession, trackNotifications } from './sessions.js';
import { withStdioServer, type StdioAddress } from './stdio.js';

type Sdk = typeof import('@modelcontextprotocol/client');
let sdk: Sdk | undefined;
/** The MCP client (and the zod schemas under it, ~6 MB) is loaded the first time a tool server is used, not at boot. */
export const mcp = async (): Promise<Sdk> => (sdk ??= await import('@modelcontextprotocol/client'));
/** The SDK when something loaded it already (an SDK error can only exist then). */
export const loadedMcp = (): Sdk | undefined => sdk;

/** How svc reaches one registered server: over HTTP, or through the sandbox (stdio.ts). */
export type ServerAddress = RemoteAddress | StdioAddress;

export interface RemoteAddress {
  /** The registered server: what this replica learnt about it (revisions.ts) is kept under it. */
  serverId: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  /** A static bearer token (decrypted just before use), or null. */
  bearer: string | null;
  /** An OAuth sign-in's access token, refreshed as needed (plugins/tools/oauth/access.ts). */
  auth?: AuthProvider;
}

/** A tool as the server lists it; `readOnly` only when the server declared `readOnlyHint: true`. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

/** Ways only a sandboxed (stdio) call fails (stdio.ts). */
export type StdioFailureKind = 'sandbox_unavailable' | 'sandbox_busy' | 'start_failed' | 'memory_limit';

/**
 * Why a call gave no usable result; the text a tool server sent is never part of it. `sign_in`:
 * an OAuth server whose sign-in is missing, expired or refused at refresh.
 */
export class ToolServerFailure extends Error {
  constructor(readonly kind: 'timeout' | 'too_large' | 'redirect' | 'unreachable' | 'protocol' | 'sign_in' | StdioFailureKind) {
    super(`tool server failure: ${kind}`);
  }
}

/**
 * One short-lived MCP session: connect (version negotiation `auto`, so servers speaking the
 * 2026-07-28 revision and 2025-era servers both work; the revision a server spoke is remembered,
 * revisions.ts), run `fn`, end the session. A connection per
 * use keeps no state between requests or replicas; tool lists are cached by the caller. A call
 * that times out or is aborted is cancelled by the SDK (a `notifications/cancelled`, or on the
 * 2026 revision the call's response stream closed); the session is ended after it, in the
 * background (sessions.ts), so the cancel arrives and a stateful server's session is deleted.
 */
export async function withServer<T>(addr: ServerAddress, limits: { maxBytes: number; timeoutMs: number }, signal: AbortSignal, fn: (c: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
  if (addr.transport === 'stdio') return withStdioServer(addr, limits, signal, fn);
  const requestInit: RequestInit = addr.bearer ? { headers: { authorization: `Bearer ${addr.bearer}` } } : {};
  // A response passing maxBytes ends the call at once, as too large (capped-fetch.ts).
  const tooLarge = new AbortController();
  const opts = { requestInit, fetch: cappedFetch(limits.maxBytes, () => tooLarge.abort()), ...(addr.auth ? { authProvider: addr.auth } : {}) };
  const url = new URL(addr.url);
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await mcp();
  const transport = addr.transport === 'sse' ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, { ...opts, redirectPolicy: 'same-origin' as const });
  const client = new Client({ name: 'svc', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const notifications = trackNotifications(transport);
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const both = AbortSignal.any([signal, timeout, tooLarge.signal]);
  const prior = revisions.prior(addr.serverId);
  try {
    await client.connect(transport, { signal: both, timeout: limits.timeoutMs, ...(prior ? { prior } : {}) });
    if (!prior) revisions.learn(addr.serverId, client);
    return await fn(client, both);
  } catch (err) {
    if (err instanceof ToolServerFailure) throw err;
    if (tooLarge.signal.aborted) throw new ToolServerFailure('too_large');
    if (timeout.aborted) throw new ToolServerFailure('timeout');
    if (signal.aborted) throw signal.reason;
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof ToolServerFailure) throw cause;
    if (String((err as Error)?.message ?? '').includes('fetch failed')) throw new ToolServerFailure('unreachable');
    // The server may speak another revision now: the next use probes again.
    revisions.forget(addr.serverId);
    throw new ToolServerFailure('protocol');
  } finally {
    void endSession(client, transport, notifications);
  }
}

export async function listTools(addr: ServerAddress, limits: { maxBytes: number; timeoutMs: number }, signal: AbortSignal): Promise<ListedTool[]> {
  return withServer(addr, limits, signal, async (c, bounded) => {
    const out: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.listTools(cursor ? { cursor } : {}, { signal: bounded, timeout: limits.timeoutMs });
      for (const t of page.tools) {
        out.push({ name: t.name, description: t.description ?? '', inputSchema: (t.inputSchema ?? { type: 'object' }) as Record<string, unknown>, readOnly: t.annotations?.readOnlyHint === true });
      }
      cursor = page.nextCursor;
    } while (cursor && out.length < 1000);
    return out;
  });
}

/** Text of a call's result for the model; `isError` results say so. Non-text parts are named, not inlined. */
export async function callTool(addr: ServerAddress, limits: { maxBytes: number; timeoutMs: number }, signal: AbortSignal, tool: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  return withServer(addr, limits, signal, async (c, bounded) => {
    const result = await c.callTool({ name: tool, arguments: args }, { signal: bounded, timeout: limits.timeoutMs });
    const parts = Array.isArray(result.content) ? result.content : [];
    const text = parts
      .map((p) => (p.type === 'text' ? p.text : `[${p.type} content omitted]`))
      .join('\n');
    const structured = !text && result.structuredContent ? JSON.stringify(result.structuredContent) : '';
    return { text: text || structured, isError: result.isError === true };
  });
}
