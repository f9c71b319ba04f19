import OpenAI from 'openai';
import * as assert from 'uvu/assert';
import { McpTestServer } from '../support/mcp-server.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, startWorld, type World } from '../support/provision.js';

export const model = 'local:tools-v1';

/** A clientside tool (run by the client, as today). */
export const clientTool = { type: 'function' as const, function: { name: 'weather', description: 'Weather at a place', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

export interface ToolsWorld extends World {
  mock: MockUpstream;
  mcp: McpTestServer;
  client: OpenAI;
  serverId: string;
  ws<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  /** A new conversation of the world's key. */
  conversation(as?: Admin): Promise<string>;
  calls(requestId: string): Promise<any[]>;
}

/** A service with one model, a real MCP server registered as `files`, and its origin allowed; `env` for the service (e.g. SVC_OTLP_ENDPOINT). */
export async function startToolsWorld(env: NodeJS.ProcessEnv = {}): Promise<ToolsWorld> {
  const mock = await new MockUpstream().start();
  const mcp = await new McpTestServer().start();
  const world = await startWorld({ plugins: { conversations: { config: { flushIntervalMs: 20 } }, tools: { config: { callTimeoutMs: 1500, maxResponseBytes: 256 * 1024, maxSteps: 3 } } } }, env);
  await world.admin.provider('local', mock.url);
  await world.admin.model(model);
  const ws = <T = any>(method: string, path: string, body?: unknown) => world.admin.call<T>(method, `/workspaces/${world.workspaceId}${path}`, body);
  const server = await ws('POST', '/tool-servers', { name: 'files', url: mcp.url });
  if (server.status !== 201) throw new Error(`register: ${server.status} ${JSON.stringify(server.body)}`);
  await world.admin.ok('POST', '/tool-origins', { origin: mcp.origin });
  const asKey = new Admin(world.svc.url, world.apiKey);
  return {
    ...world, mock, mcp, ws, serverId: server.body.id,
    client: new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 }),
    conversation: async (as = asKey) => (await as.ok<{ id: string }>('POST', `/workspaces/${world.workspaceId}/conversations`, {})).id,
    calls: async (requestId) => (await world.admin.ok<{ data: any[] }>('GET', `/workspaces/${world.workspaceId}/tool-calls?request_id=${encodeURIComponent(requestId)}`)).data,
    stop: async () => {
      await world.stop();
      await mock.stop();
      await mcp.stop();
    },
  };
}

export const call = (name: string, args: Record<string, unknown>, id = `call_${name}`) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });

/** The OpenAI SDK's error as [status, code, param]. */
export async function refusal(p: Promise<unknown>): Promise<[number, string, unknown]> {
  try {
    await p;
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return [e.status!, String(e.code), e.param];
  }
  throw new Error('expected a refusal');
}

/** Chat requests the mock received, in order. */
export const upstreamBodies = (mock: MockUpstream): any[] => mock.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);

/**
 * One chat request in a new conversation whose model calls `fn` once and then answers "Done.":
 * the result the model was told, and the request id.
 */
export async function callOnce(w: { mock: MockUpstream; client: OpenAI; conversation(): Promise<string> }, fn: string, args: Record<string, unknown> = {}): Promise<{ told: string; requestId: string }> {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call(fn, args)] } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const { data, response } = await w.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Use the tool' }] }, { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Done.');
  return { told: upstreamBodies(w.mock).at(-1).messages.at(-1).content, requestId: response.headers.get('x-svc-request-id')! };
}
