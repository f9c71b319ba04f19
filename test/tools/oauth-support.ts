import OpenAI from 'openai';
import { OAuthMcpServer } from '../support/mcp-oauth-server.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { TestAuthServer, type AuthServerOptions } from '../support/oauth-server.js';
import { Admin, startWorld, type World } from '../support/provision.js';
import { call, model } from './support.js';

/** An authorization server and the MCP server it protects. */
export interface Protected {
  as: TestAuthServer;
  mcp: OAuthMcpServer;
}

export async function protectedServer(as: AuthServerOptions = {}, discovery: 'challenge' | 'well-known' = 'challenge'): Promise<Protected> {
  const a = await new TestAuthServer(as).start();
  return { as: a, mcp: await new OAuthMcpServer(a, discovery).start() };
}

export interface OAuthWorld extends World, Protected {
  mock: MockUpstream;
  client: OpenAI;
  ws<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  /** Registers a server with `auth: "oauth"` (its origins allowed) and returns its id. */
  register(name: string, p?: Protected, fields?: Record<string, unknown>): Promise<string>;
  /** Starts a sign-in as the world's admin: the authorization URL. */
  start(serverId: string): Promise<string>;
  /** A new conversation of the world's key. */
  conversation(): Promise<string>;
  /** One conversation request in which the model calls `fn` once, then answers "Done.". */
  useTool(fn: string): Promise<{ status: number; content: string | null | undefined; requestId: string }>;
  /** What the model got back for its tool call in the last loop (the `tool` message). */
  toolResult(): string;
  /** The sign-in state the listing shows for a server. */
  signInState(serverId: string): Promise<string | null>;
  /** Extra servers to stop with the world. */
  also: Protected[];
}

/** Follows redirects like a browser would, from `url` until a page that is not a redirect. `rewrite` plays the proxy in front of svc. */
export async function browse(url: string, o: { cookie?: string; rewrite?: (u: string) => string } = {}): Promise<{ res: Response; hops: string[] }> {
  const hops: string[] = [];
  let next = url;
  for (let i = 0; i < 10; i++) {
    hops.push(next);
    const target = o.rewrite?.(next) ?? next;
    const res = await fetch(target, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml', ...(o.cookie ? { cookie: o.cookie } : {}) } });
    if (res.status < 300 || res.status >= 400) return { res, hops };
    await res.body?.cancel();
    next = new URL(res.headers.get('location')!, target).toString();
  }
  throw new Error('too many redirects');
}

/** A service with one model and an OAuth-protected MCP server (its origins and its authorization server's allowed, not yet registered). */
export async function startOAuthWorld(o: { as?: AuthServerOptions; discovery?: 'challenge' | 'well-known'; tools?: Record<string, unknown> } = {}): Promise<OAuthWorld> {
  const mock = await new MockUpstream().start();
  const main = await protectedServer(o.as, o.discovery);
  const world = await startWorld({ plugins: { conversations: { config: { flushIntervalMs: 20 } }, tools: { config: { callTimeoutMs: 3000, maxSteps: 3, ...o.tools } } } });
  await world.admin.provider('local', mock.url);
  await world.admin.model(model);
  const ws = <T = any>(method: string, path: string, body?: unknown) => world.admin.call<T>(method, `/workspaces/${world.workspaceId}${path}`, body);
  const asKey = new Admin(world.svc.url, world.apiKey);
  const also: Protected[] = [];
  const client = new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 });
  const conversation = async () => (await asKey.ok<{ id: string }>('POST', `/workspaces/${world.workspaceId}/conversations`, {})).id;
  return {
    ...world, ...main, mock, ws, also,
    client, conversation,
    register: async (name, p = main, fields = {}) => {
      for (const origin of [p.mcp.origin, p.as.origin]) await world.admin.ok('POST', '/tool-origins', { origin });
      const r = await ws('POST', '/tool-servers', { name, url: p.mcp.url, auth: 'oauth', ...fields });
      if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id;
    },
    start: async (serverId) => {
      const r = await ws<{ authorization_url: string }>('POST', `/tool-servers/${serverId}/sign-in`);
      if (r.status !== 201) throw new Error(`start: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.authorization_url;
    },
    useTool: async (fn) => {
      const conv = await conversation();
      mock.enqueue({ reply: { content: null, tool_calls: [call(fn, {})] } });
      mock.enqueue({ reply: { content: 'Done.' } });
      const ask = { model, messages: [{ role: 'user' as const, content: 'Use the tool' }] };
      const { data, response } = await client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } }).withResponse();
      return { status: response.status, content: data.choices[0]!.message.content, requestId: response.headers.get('x-svc-request-id')! };
    },
    toolResult: () => {
      const bodies = mock.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as any);
      return bodies.at(-1).messages.filter((m: any) => m.role === 'tool').at(-1)?.content;
    },
    signInState: async (serverId) => (await ws<{ data: any[] }>('GET', '/tool-servers')).body.data.find((s) => s.id === serverId)?.sign_in ?? null,
    stop: async () => {
      await world.stop();
      await mock.stop();
      for (const p of [main, ...also]) {
        await p.mcp.stop();
        await p.as.stop();
      }
    },
  };
}

/** What the model is told when a server's sign-in no longer works (plugins/tools/runner.ts). */
export const signInNeeded = 'This tool cannot be used right now: its server needs a workspace administrator to sign in to it again.';
