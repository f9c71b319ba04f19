import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { KernelConfig, Store } from '../../kernel/index.js';

type Row = Record<string, unknown>;

/** Database kind, server version and size in bytes. */
export async function databasePart(store: Store, kernel: KernelConfig): Promise<unknown> {
  if (store.dialect === 'postgresql') {
    const [v] = await store.execute<Row>('show server_version');
    const [size] = await store.execute<Row>('select pg_database_size(current_database()) as n');
    return { dialect: 'postgresql', version: String(v?.server_version ?? ''), size_bytes: Number(size?.n ?? 0) };
  }
  const [v] = await store.execute<Row>('select sqlite_version() as v');
  const file = resolve(process.cwd(), kernel.dataDir, 'svc.sqlite');
  const bytes = (f: string) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  };
  return { dialect: 'sqlite', version: String(v?.v ?? ''), size_bytes: bytes(file), wal_bytes: bytes(`${file}-wal`) };
}

/** Redis version, memory and key count over a short-lived connection of its own; the in-process cache has none. */
export async function cachePart(kernel: KernelConfig): Promise<unknown> {
  if (!kernel.cache.url) return { kind: 'memory' };
  // Loaded here: the embedded shape never loads the Redis client otherwise.
  const { Redis } = await import('ioredis');
  const redis = new Redis(kernel.cache.url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const field = (info: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? null;
    const server = await redis.info('server');
    const memory = await redis.info('memory');
    return { kind: 'redis', version: field(server, 'redis_version'), used_memory_bytes: Number(field(memory, 'used_memory') ?? 0), keys_in_db: await redis.dbsize() };
  } finally {
    redis.disconnect();
  }
}

/** Counts by kind and state: grouped queries per table; a table that is not there is listed as absent. */
const grouped: Array<{ kind: string; sql: string }> = [
  { kind: 'persons', sql: 'select status as state, count(*) as n from identity_persons group by status' },
  { kind: 'workspaces', sql: 'select null as state, count(*) as n from identity_workspaces' },
  { kind: 'memberships', sql: 'select status as state, count(*) as n from identity_memberships group by status' },
  { kind: 'api_keys', sql: "select case when revoked_at is null then 'active' else 'revoked' end as state, count(*) as n from identity_api_keys group by case when revoked_at is null then 'active' else 'revoked' end" },
  { kind: 'sessions', sql: 'select null as state, count(*) as n from identity_sessions' },
  { kind: 'providers', sql: 'select null as state, count(*) as n from catalog_providers' },
  { kind: 'models', sql: 'select null as state, count(*) as n from catalog_models' },
  { kind: 'budget_caps', sql: 'select scope as state, count(*) as n from budget_caps group by scope' },
  { kind: 'budget_holds', sql: 'select state, count(*) as n from budget_holds group by state' },
  { kind: 'budget_alerts', sql: 'select state, count(*) as n from budget_alerts group by state' },
  { kind: 'audit_entries', sql: 'select outcome as state, count(*) as n from audit_entries group by outcome' },
  { kind: 'recording_workspaces', sql: "select case when enabled = 1 then 'on' else 'off' end as state, count(*) as n from recording_settings group by enabled" },
];

export async function countsPart(store: Store, extraTables: Array<{ kind: string; table: string }>): Promise<unknown> {
  // Unreachable is not "absent": the whole part says why instead of every table looking missing.
  await store.ping();
  const out: Record<string, unknown> = {};
  const seen = new Set(grouped.map((g) => g.kind));
  const queries = [...grouped, ...extraTables.filter((t) => !seen.has(t.kind)).map((t) => ({ kind: t.kind, sql: `select null as state, count(*) as n from ${t.table}` }))];
  for (const q of queries) {
    try {
      const rows = await store.execute<Row>(q.sql);
      out[q.kind] = rows.length === 1 && rows[0]!.state === null ? Number(rows[0]!.n) : Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
    } catch {
      out[q.kind] = 'absent';
    }
  }
  return out;
}

/** The last day of failed requests by status and error code (from usage records). */
export async function failedPart(store: Store, now = Date.now()): Promise<unknown> {
  const rows = await store.execute<Row>(
    'select status, error_code, count(*) as n from usage_records where created_at >= ? and (status >= 400 or error_code is not null) group by status, error_code order by count(*) desc',
    [now - 86_400_000],
  );
  return {
    since: new Date(now - 86_400_000).toISOString(),
    by_code: rows.map((r) => ({ status: Number(r.status), code: (r.error_code as string | null) ?? null, count: Number(r.n) })),
  };
}
