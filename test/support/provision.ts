import { randomBytes } from 'node:crypto';
import { createBacking, startService, type Backing, type TestService } from './harness.js';

export const adminEmail = 'admin@example.test';
export const adminPassword = 'correct horse battery staple';

/** Env that makes the service create the first instance admin at start (identity plugin). */
export const adminEnv = { SVC_ADMIN_EMAIL: adminEmail, SVC_ADMIN_PASSWORD: adminPassword };

/** A small admin API client: JSON in and out, bearer session token. */
export class Admin {
  constructor(readonly url: string, readonly token: string) {}

  static async signIn(url: string, email = adminEmail, password = adminPassword): Promise<Admin> {
    const res = await fetch(`${url}/admin/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
    return new Admin(url, ((await res.json()) as { token: string }).token);
  }

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> {
    const res = await fetch(`${this.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T, headers: res.headers };
  }

  async ok<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.call<T>(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async workspace(name = `ws-${randomBytes(3).toString('hex')}`): Promise<string> {
    return (await this.ok<{ id: string }>('POST', '/workspaces', { name })).id;
  }

  async key(workspaceId: string, name = `test key ${randomBytes(3).toString('hex')}`): Promise<string> {
    return (await this.ok<{ key: string }>('POST', `/workspaces/${workspaceId}/keys`, { name })).key;
  }

  async provider(name: string, address: string, apiKey?: string): Promise<void> {
    await this.ok('POST', '/providers', apiKey === undefined ? { name, address } : { name, address, api_key: apiKey });
  }

  async model(name: string, fields: Record<string, unknown> = {}): Promise<void> {
    await this.ok('POST', '/models', {
      name,
      context_window: 128_000,
      output_limit: 4096,
      input_price: '2.50',
      output_price: '10.00',
      can_read_images: true,
      can_read_pdf: true,
      can_call_tools: true,
      ...fields,
    });
  }
}

/** One service with an admin signed in, a workspace and a key: the usual start of an end-to-end test. */
export interface World {
  backing: Backing;
  svc: TestService;
  admin: Admin;
  workspaceId: string;
  apiKey: string;
  stop(): Promise<void>;
}

export async function startWorld(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<World> {
  const backing = await createBacking();
  const svc = await startService({ backing, overrides, env: { ...adminEnv, ...env } });
  const admin = await Admin.signIn(svc.url);
  const workspaceId = await admin.workspace();
  const apiKey = await admin.key(workspaceId);
  return {
    backing,
    svc,
    admin,
    workspaceId,
    apiKey,
    stop: async () => {
      await svc.stop();
      await backing.drop();
    },
  };
}
