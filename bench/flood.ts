import { existsSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import autocannon from 'autocannon';
import pg from 'pg';
import { startSvcTarget, type Target } from './targets.js';

/** What one refusal flood left in the database. */
export interface FloodFigures {
  kind: 'wrong key' | 'rate-limited key';
  seconds: number;
  requests: number;
  /** Status counts, e.g. `401 ×123456`. */
  statuses: string;
  rowsGained: Record<string, number>;
  bytesGained: number;
}

/** The rate limit the flood's svc runs with: a handful served, the rest refused with 429. */
const floodRateLimit = { requests: 20, windowSeconds: 3600 };

/** Rows per table and the store's size in bytes. */
async function census(t: Target): Promise<{ rows: Record<string, number>; bytes: number }> {
  const rows: Record<string, number> = {};
  if (t.store?.sqliteFile) {
    const file = t.store.sqliteFile;
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const tables = db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as Array<{ name: string }>;
      for (const { name } of tables) rows[name] = Number((db.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n);
    } finally {
      db.close();
    }
    const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
    return { rows, bytes: size(file) + size(`${file}-wal`) };
  }
  const c = new pg.Client({ connectionString: t.store!.databaseUrl });
  await c.connect();
  try {
    const tables = await c.query<{ name: string }>("select tablename as name from pg_tables where schemaname = 'public'");
    for (const { name } of tables.rows) rows[name] = Number((await c.query<{ n: string }>(`select count(*) as n from "${name}"`)).rows[0]!.n);
    const size = await c.query<{ b: string }>('select pg_database_size(current_database()) as b');
    return { rows, bytes: Number(size.rows[0]!.b) };
  } finally {
    await c.end();
  }
}

function flood(t: Target, apiKey: string, seconds: number): Promise<{ requests: number; statuses: string }> {
  const counts = new Map<number, number>();
  return new Promise((resolve, reject) => {
    const tracker = autocannon(
      {
        url: `${t.url}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model: t.model('bench-d0'), messages: [{ role: 'user', content: 'hi' }] }),
        connections: 16,
        duration: seconds,
      },
      (err) => (err ? reject(err) : resolve({ requests: [...counts.values()].reduce((a, n) => a + n, 0), statuses: [...counts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s} ×${n}`).join(', ') })),
    );
    tracker.on('response', (_c: unknown, status: number) => counts.set(status, (counts.get(status) ?? 0) + 1));
  });
}

const diff = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - (before[k] ?? 0)]));

/**
 * For each length in `lengths`: a fresh svc in `shape` (rate limit 20 an hour), flooded first with
 * wrong keys, then with its own key past the limit, each for that many seconds; rows and bytes the
 * database gained are read 3 s after each flood (refusal counters are written once a second).
 */
export async function floodFigures(shape: 'embedded' | 'scale-out', mockPort: number, logDir: string, lengths: number[], log: (l: string) => void): Promise<FloodFigures[]> {
  const out: FloodFigures[] = [];
  for (const seconds of lengths) {
    const t = await startSvcTarget({ shape, mockPort, logDir, upstreamIds: ['bench-d0'], config: { plugins: { 'rate-limit': { config: floodRateLimit } } } });
    try {
      for (const kind of ['wrong key', 'rate-limited key'] as const) {
        const before = await census(t);
        const key = kind === 'wrong key' ? `svc_${'x'.repeat(40)}` : t.apiKey;
        const r = await flood(t, key, seconds);
        await new Promise((done) => setTimeout(done, 3000));
        const after = await census(t);
        const f: FloodFigures = { kind, seconds, ...r, rowsGained: diff(after.rows, before.rows), bytesGained: after.bytes - before.bytes };
        log(`  svc-${shape} flood ${kind} ${seconds} s: ${r.requests} requests (${r.statuses}), rows ${JSON.stringify(Object.fromEntries(Object.entries(f.rowsGained).filter(([, n]) => n)))}, bytes +${f.bytesGained}`);
        out.push(f);
      }
    } finally {
      await t.stop();
    }
  }
  return out;
}
