import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './child.js';
import { autoUpstreamId } from './scenarios.js';
import { benchAdmin } from './svc.js';

/** What the benchmark set up in one svc, through its admin API. */
export interface Provisioned {
  apiKey: string;
  /** Budget caps created, by scope; empty when the budgets admin routes are absent. */
  caps: string[];
  /** Why caps were not set, when they were not. */
  capsNote?: string;
  /** Routes added for the `auto` scenario, or why none were. */
  routes: { count: number; note?: string };
}

/** The provider name the models live under: requests name them `mock:<upstream id>`. */
export const providerName = 'mock';

/** Caps so high they never refuse (micro-USD: one billion dollars). */
const hugeCap = 1_000_000_000_000_000;

class AdminClient {
  constructor(
    private readonly url: string,
    private token = '',
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${this.url}/admin/v1${path}`, {
      method,
      headers: { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  }

  async ok(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const r = await this.call(method, path, body);
    if (r.status >= 300) throw new Error(`svc admin API ${method} ${path} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  }

  async signIn(): Promise<string> {
    const r = await this.ok('POST', '/sessions', benchAdmin);
    this.token = String(r.token);
    return String((r.person as { id: string }).id);
  }
}

/** Caps at all four scopes when the budgets plugin's admin routes answer; otherwise a note why not. */
async function setCaps(admin: AdminClient, workspaceId: string, personId: string, keyId: string): Promise<Pick<Provisioned, 'caps' | 'capsNote'>> {
  const probe = await admin.call('GET', '/budget-caps');
  if (probe.status === 404) return { caps: [], capsNote: 'budgets admin routes absent (GET /admin/v1/budget-caps → 404): no caps' };
  if (probe.status !== 200) return { caps: [], capsNote: `GET /admin/v1/budget-caps → ${probe.status}: no caps` };
  const period = 'month';
  await admin.ok('POST', '/budget-caps', { amount_micro_usd: hugeCap, period });
  const ws = `/workspaces/${workspaceId}/budget-caps`;
  await admin.ok('POST', ws, { scope: 'workspace', amount_micro_usd: hugeCap, period });
  await admin.ok('POST', ws, { scope: 'member', person_id: personId, amount_micro_usd: hugeCap, period });
  await admin.ok('POST', ws, { scope: 'key', key_id: keyId, amount_micro_usd: hugeCap, period });
  return { caps: ['instance', 'workspace', 'member', 'key'] };
}

/**
 * The routing evaluation's assistant routes (bench/routing/sets/assistant/routes.json), every one served by the same mock
 * model, and that model as the workspace default: whatever `auto` decides, the reply is the same,
 * so the scenario measures the decision (classifier included) and nothing else.
 */
async function addRoutes(admin: AdminClient, workspaceId: string, model: string): Promise<Provisioned['routes']> {
  const ws = `/workspaces/${workspaceId}`;
  const probe = await admin.call('GET', `${ws}/routes`);
  if (probe.status !== 200) return { count: 0, note: `GET /admin/v1${ws}/routes → ${probe.status}: no routes` };
  const file = join(root, 'bench/routing/sets/assistant/routes.json');
  const { routes } = JSON.parse(readFileSync(file, 'utf8')) as { routes: Array<{ name: string; description: string; examples: string[] }> };
  await admin.ok('PATCH', `${ws}/routing`, { default_model: model, routing_enabled: true });
  for (const r of routes) await admin.ok('POST', `${ws}/routes`, { name: r.name, description: r.description, examples: r.examples, model });
  return { count: routes.length };
}

/**
 * Sets up one svc for the benchmark: signs in the bootstrapped admin, adds the mock provider and
 * one model per upstream id, a workspace, an API key, and very high caps at every scope.
 */
export async function provision(url: string, upstream: string, upstreamIds: string[], modelFields: Record<string, unknown> = {}): Promise<Provisioned> {
  const admin = new AdminClient(url);
  const personId = await admin.signIn();
  await admin.ok('POST', '/providers', { name: providerName, address: upstream, api_key: 'sk-upstream' });
  for (const id of upstreamIds) {
    await admin.ok('POST', '/models', {
      name: `${providerName}:${id}`,
      context_window: 128_000,
      output_limit: 4096,
      input_price: '2.50',
      output_price: '10.00',
      ...modelFields,
    });
  }
  const workspaceId = String((await admin.ok('POST', '/workspaces', { name: 'bench' })).id);
  const key = await admin.ok('POST', `/workspaces/${workspaceId}/keys`, { name: 'bench key' });
  const caps = await setCaps(admin, workspaceId, personId, String(key.id));
  const routes = await addRoutes(admin, workspaceId, `${providerName}:${autoUpstreamId}`);
  return { apiKey: String(key.key), ...caps, routes };
}
