import OpenAI from 'openai';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, startWorld, type World } from '../support/provision.js';

/** The models of a routing world: a default, a code route's model and its fallback, a writer, one that cannot call tools. */
export const models = {
  general: 'local:general-v1',
  coder: 'local:coder/v2:latest',
  coderBackup: 'local:coder-backup',
  writer: 'local:writer-v1',
  plain: 'local:plain-v1',
} as const;

export interface RoutingWorld extends World {
  mock: MockUpstream;
  client: OpenAI;
  /** Admin API call under /admin/v1/workspaces/<this workspace>. */
  ws<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  /** One chat completion through the SDK; returns the reply and the response headers. */
  ask(model: string, text: string, extra?: { headers?: Record<string, string>; tools?: boolean; stream?: boolean }): Promise<{ content: string; headers: Headers }>;
}

/** Routing off the classifier, so the rules before and after it are what decides (its own tests turn it on). */
export const noClassifier = { plugins: { routing: { config: { classifier: { enabled: false } } } } };

export const tool = { type: 'function' as const, function: { name: 'lookup', description: 'Look something up', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };

export async function startRoutingWorld(overrides: Record<string, unknown> = noClassifier): Promise<RoutingWorld> {
  const mock = await new MockUpstream().start();
  let world: World;
  try {
    world = await startWorld(overrides);
  } catch (err) {
    await mock.stop();
    throw err;
  }
  await world.admin.provider('local', mock.url);
  for (const name of Object.values(models)) await world.admin.model(name, name === models.plain ? { can_call_tools: false, can_read_images: false, can_read_pdf: false } : {});
  const client = new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 });
  const ws = <T = any>(method: string, path: string, body?: unknown) => world.admin.call<T>(method, `/workspaces/${world.workspaceId}${path}`, body);
  const ask: RoutingWorld['ask'] = async (model, text, extra = {}) => {
    const params = { model, messages: [{ role: 'user' as const, content: text }], ...(extra.tools ? { tools: [tool] } : {}) };
    if (extra.stream) {
      const { data, response } = await client.chat.completions.create({ ...params, stream: true }, { headers: extra.headers }).withResponse();
      let content = '';
      for await (const chunk of data) content += chunk.choices[0]?.delta.content ?? '';
      return { content, headers: response.headers };
    }
    const { data, response } = await client.chat.completions.create(params, { headers: extra.headers }).withResponse();
    return { content: data.choices[0]?.message.content ?? '', headers: response.headers };
  };
  return {
    ...world, mock, client, ws, ask,
    stop: async () => {
      await world.stop();
      await mock.stop();
    },
  };
}

/** The routing headers of a reply, absent ones as null, for one exact comparison. */
export function routingHeaders(h: Headers): Record<string, string | null> {
  const names = ['x-svc-model', 'x-svc-routing-rule', 'x-svc-route', 'x-svc-routing-reason', 'x-svc-routing-confidence', 'x-svc-fallback-from', 'x-svc-fallback-scope'];
  return Object.fromEntries(names.map((n) => [n, h.get(n)]));
}

/** What the upstream was asked for last (its own model id). */
export const lastUpstreamModel = (mock: MockUpstream): string => mock.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)?.body?.model;

export const fence = 'Why does this fail?\n```python\nprint(1/0)\n```';

export async function eventually(check: () => Promise<boolean>, ms = 1000): Promise<number> {
  const start = Date.now();
  while (Date.now() - start <= ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  return -1;
}

/** A second person, member (not admin) of the world's workspace, signed in; with an API key of their own. */
export async function member(w: World, email: string): Promise<{ admin: Admin; key: string }> {
  const password = 'another long password';
  await w.admin.ok('POST', '/persons', { email, password });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email, role: 'member' });
  const admin = await Admin.signIn(w.svc.url, email, password);
  return { admin, key: await admin.key(w.workspaceId) };
}
