import { randomBytes } from 'node:crypto';
import { Service } from '../../kernel/lifecycle/service.js';
import { MemorySink, startService, type Backing, type TestService } from '../support/harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
/** A parsed JSON body; tests assert on its fields directly. */
export type Json = any;

export const adminEmail = 'root@example.test';
/** Also a canary: it must never show up in logs or responses. */
export const adminPassword = 'canary-root-pw-7f3a9c';

export interface BootOptions {
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Leave out SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD. */
  noAdmin?: boolean;
}

/** The real service with admin-api and identity on, the first admin made from the environment. */
export function boot(backing: Backing, o: BootOptions = {}): Promise<TestService> {
  const env = o.noAdmin ? { ...o.env } : { SVC_ADMIN_EMAIL: adminEmail, SVC_ADMIN_PASSWORD: adminPassword, ...o.env };
  return startService({ backing, env, overrides: { plugins: { 'admin-api': {}, identity: { config: o.config ?? {} } } } });
}

/** A service for `svc` subcommands on the backing, configured like the harness's (it does not listen). */
export function commandService(backing: Backing, logs = new MemorySink(), env: NodeJS.ProcessEnv = {}): Service {
  return new Service({
    env,
    logSink: logs,
    overrides: {
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'debug' },
      dataDir: backing.dataDir,
      database: backing.databaseUrl ? { url: backing.databaseUrl } : {},
      cache: backing.redisUrl ? { url: backing.redisUrl, prefix: backing.redisPrefix } : {},
      plugins: { 'admin-api': {}, identity: {} },
    },
  });
}

export interface Reply {
  status: number;
  body: Json;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer …`. */
  auth?: string;
  cookie?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One admin API call under /admin/v1. */
export async function call(url: string, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.auth !== undefined) headers.authorization = `Bearer ${o.auth}`;
  if (o.cookie !== undefined) headers.cookie = o.cookie;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}/admin/v1${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** Signs in and returns the session token. */
export async function signIn(url: string, email: string, password: string): Promise<string> {
  const r = await call(url, 'POST', '/sessions', { body: { email, password } });
  if (r.status !== 201) throw new Error(`sign-in failed: ${r.status} ${r.text}`);
  return r.body.token as string;
}

/** Creates a person with a password (as an instance admin) and returns their id and a session. */
export async function newPerson(url: string, adminToken: string, email: string, password = `pw-${email}-long`): Promise<{ id: string; token: string; password: string }> {
  const r = await call(url, 'POST', '/persons', { auth: adminToken, body: { email, password } });
  if (r.status !== 201) throw new Error(`create person failed: ${r.status} ${r.text}`);
  return { id: r.body.id as string, token: await signIn(url, email, password), password };
}

export async function newWorkspace(url: string, adminToken: string, name: string): Promise<string> {
  const r = await call(url, 'POST', '/workspaces', { auth: adminToken, body: { name } });
  if (r.status !== 201) throw new Error(`create workspace failed: ${r.status} ${r.text}`);
  return r.body.id as string;
}

export async function addMember(url: string, token: string, workspaceId: string, email: string, role: 'admin' | 'member' = 'member'): Promise<void> {
  const r = await call(url, 'POST', `/workspaces/${workspaceId}/members`, { auth: token, body: { email, role } });
  if (r.status !== 201) throw new Error(`add member failed: ${r.status} ${r.text}`);
}

export async function newKey(url: string, token: string, workspaceId: string, name = `k-${randomBytes(3).toString('hex')}`): Promise<{ id: string; key: string }> {
  const r = await call(url, 'POST', `/workspaces/${workspaceId}/keys`, { auth: token, body: { name } });
  if (r.status !== 201) throw new Error(`create key failed: ${r.status} ${r.text}`);
  return { id: r.body.id as string, key: r.body.key as string };
}

/** Polls `check` until it is true or `ms` pass; returns the time it took, or -1. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start <= ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  return -1;
}
