import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { CacheToken, StoreToken } from '../../kernel/index.js';
import { startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEnv } from '../support/provision.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { BudgetsFlushToken, BudgetsReapToken } from '../../plugins/budgets/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';

/** The plugins a budgets test runs with: the real model API and everything it needs, in config order. */
export function budgetPlugins(budgets: Record<string, unknown> = {}, rateLimit: Record<string, unknown> = {}, tracing: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'admin-api': {},
    identity: {},
    providers: {},
    catalog: {},
    'chat-api': {},
    tracing: { config: { flushIntervalMs: 50, ...tracing } },
    budgets: { config: { flushIntervalMs: 50, ...budgets } },
    'rate-limit': { config: { requests: 100_000, ...rateLimit } },
  };
}

export interface Instance extends TestService {
  admin: Admin;
  /** Writes usage records, running totals and ended holds now. */
  flush(): Promise<void>;
  reap(): Promise<number>;
  sql<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface StartOptions {
  budgets?: Record<string, unknown>;
  rateLimit?: Record<string, unknown>;
  tracing?: Record<string, unknown>;
  plugins?: Record<string, unknown>;
  /** Kernel config merged over the test defaults (e.g. `database: { timeoutMs }`). */
  kernel?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cache?: Record<string, unknown>;
}

/** One instance of the service on the backing, with the bootstrapped instance admin signed in. */
export async function startInstance(backing: Backing, o: StartOptions = {}): Promise<Instance> {
  const overrides: Record<string, unknown> = { ...o.kernel, plugins: o.plugins ?? budgetPlugins(o.budgets, o.rateLimit, o.tracing) };
  if (o.cache) overrides.cache = o.cache;
  const svc = await startService({ backing, env: { ...adminEnv, ...o.env }, overrides });
  const s = svc.service;
  return {
    ...svc,
    admin: await Admin.signIn(svc.url),
    flush: async () => {
      await s.get(TracingFlushToken)();
      await s.get(BudgetsFlushToken)();
    },
    reap: () => s.get(BudgetsReapToken)(),
    sql: (sql, params) => s.get(StoreToken).execute(sql, params),
  };
}

/** The cache the instance uses (tests read counters and the holds set through it). */
export const cacheOf = (i: Instance) => i.service.get(CacheToken);

export function client(i: { url: string }, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${i.url}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
}

/** Prices in US dollars per million tokens, as the admin API takes them. */
export interface Priced { input: string; output: string; outputLimit?: number; contextWindow?: number }

/** A provider on the mock upstream and its priced models (`mock:<id>`). */
export async function provision(admin: Admin, upstream: MockUpstream, models: Record<string, Priced>): Promise<void> {
  await admin.provider('mock', upstream.url);
  for (const [id, p] of Object.entries(models)) {
    await admin.model(`mock:${id}`, { input_price: p.input, output_price: p.output, output_limit: p.outputLimit ?? 4096, context_window: p.contextWindow ?? 128_000 });
  }
}

export async function personId(admin: Admin): Promise<string> {
  return (await admin.ok<{ person: { id: string } }>('GET', '/me')).person.id;
}

/** A new API key of the signed-in admin in the workspace: its id and value. */
export async function newKey(admin: Admin, workspaceId: string, name = `test key ${randomBytes(3).toString('hex')}`): Promise<{ id: string; value: string }> {
  const k = await admin.ok<{ id: string; key: string }>('POST', `/workspaces/${workspaceId}/keys`, { name });
  return { id: k.id, value: k.key };
}

/** Sum of the usage records' charges, optionally filtered (`where` over usage_records columns). */
export async function charged(i: Instance, where = '1 = 1', params: unknown[] = []): Promise<number> {
  const [r] = await i.sql<{ s: string | number | null }>(`select sum(cost_micro_usd) as s from usage_records where ${where}`, params);
  return Number(r?.s ?? 0);
}

/** A running total by key (`scope:id:period:periodKey`), 0 when there is none. */
export async function total(i: Instance, key: string): Promise<number> {
  const [r] = await i.sql<{ t: string | number }>('select total_micro_usd as t from budget_totals where total_key = ?', [key]);
  return Number(r?.t ?? 0);
}

/** A short error summary of a failed OpenAI SDK call: status, code, svc fields, headers. */
export function apiError(err: unknown): { status: number; code: string; svc: Record<string, unknown> | undefined; headers: Headers } {
  if (!(err instanceof OpenAI.APIError)) throw err;
  const body = err.error as { code?: string; svc?: Record<string, unknown> } | undefined;
  return { status: err.status ?? 0, code: String(err.code ?? body?.code), svc: body?.svc, headers: err.headers as unknown as Headers };
}

/**
 * Flushes and retries `check` until it passes (settle hooks run just after the reply reaches the
 * client, so records may land a moment later); rethrows its last failure after `ms`.
 */
export async function eventually(i: Instance, check: () => Promise<void>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    await i.flush();
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 30));
    }
  }
}
