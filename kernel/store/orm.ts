import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, resolve } from 'node:path';
import { MikroORM as SqlMikroORM, SqliteDriver, NodeSqliteDialect, type AbstractSqlConnection, type EntityManager } from '@mikro-orm/sql';
import type { MikroORM as PgMikroORM } from '@mikro-orm/postgresql';
import type { EntitySchema } from '@mikro-orm/core';
import { defineToken } from '../container/tokens.js';
import type { KernelConfig } from '../config/schema.js';
import type { Dialect, Migration } from './migrations.js';
import { runBound, toPostgresPlaceholders } from './bound-sql.js';
import { PgWriter } from './pg-writer.js';
import { oneStatement, splitRows } from './pg-one-statement.js';
import { SqliteWriter } from './sqlite-writer.js';
import { ownParams, type Rows, type WriteBehind, type WriteStatement } from './write-behind.js';

/**
 * The database as plugins see it: a fresh EntityManager per unit of work, raw SQL for migrations
 * and health, and the dialect in use.
 *
 * @example
 * const em = store.em();
 * await em.persist(em.create(Person, {...})).flush();
 */
export interface Store {
  readonly dialect: Dialect;
  em(): EntityManager;
  execute<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Runs a write whose result nobody waits on before answering (batched inserts behind the
   * response). On SQLite it runs on a worker thread with its own connection, so it never blocks
   * the event loop; on PostgreSQL it is an ordinary pooled query.
   */
  writeBehind(sql: string, params: unknown[]): Promise<void>;
  /** Runs `fn` in one transaction on one connection; `exec` runs SQL inside it. */
  transaction<T>(fn: (exec: Exec) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` in one write transaction and resolves with each one's rows once it is
   * committed (the settle's group commit). On SQLite it runs on the writer thread, so the commit
   * never blocks the event loop; on PostgreSQL it is one pooled transaction.
   */
  commitWrites(statements: WriteStatement[]): Promise<Rows[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type Exec = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

export const StoreToken = defineToken<Store>('kernel.store');

type AnyOrm = Awaited<ReturnType<typeof SqlMikroORM.init>> | Awaited<ReturnType<typeof PgMikroORM.init>>;

/** Opens SQLite (embedded default, via node:sqlite: no native addon) or PostgreSQL, without schema discovery by reflection. */
export async function openStore(config: KernelConfig, entities: EntitySchema[]): Promise<Store> {
  let orm: AnyOrm;
  let dialect: Dialect;
  const file = resolve(process.cwd(), config.dataDir, 'svc.sqlite');
  const common = { entities, discovery: { warnWhenNoEntities: false }, allowGlobalContext: false, debug: false };
  if (config.database.url) {
    dialect = 'postgresql';
    // Loaded only when used: the embedded shape never pays for the PostgreSQL driver's memory.
    const { MikroORM: Pg } = await import('@mikro-orm/postgresql');
    orm = await Pg.init({
      ...common,
      clientUrl: config.database.url,
      pool: { min: 0, max: config.database.poolMax },
      // Waiting for a pooled connection (or a new one) is bounded like every other call: a pool
      // whose connections went silent must not hold a caller for ever.
      driverOptions: { connectionTimeoutMillis: config.database.timeoutMs, keepAlive: true },
    });
  } else {
    dialect = 'sqlite';
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true });
    orm = await SqlMikroORM.init({ ...common, driver: SqliteDriver, dbName: file, driverOptions: new NodeSqliteDialect(file) });
    await orm.em.getConnection().execute('pragma journal_mode = wal');
    // WAL with synchronous=normal is durable across process crashes (not power loss of the last
    // commits) and keeps an fsync off the event loop on every write.
    await orm.em.getConnection().execute('pragma synchronous = normal');
    await orm.em.getConnection().execute('pragma busy_timeout = 5000');
    // Checkpoints (copying the WAL into the database file, with an fsync) are left to a thread of
    // their own (sqlite-checkpointer.ts): run here they stall every request.
    await orm.em.getConnection().execute('pragma wal_autocheckpoint = 0');
  }
  const connection = () => orm.em.getConnection() as unknown as AbstractSqlConnection;
  const pg = dialect === 'postgresql';
  const transaction = <T>(fn: (exec: Exec) => Promise<T>): Promise<T> =>
    connection().transactional((trx) => fn(<R>(sql: string, params: unknown[] = []) => runBound<R>(trx, pg, sql, params)));
  const own = pg ? new PgWriter({ url: config.database.url!, timeoutMs: config.database.timeoutMs }) : undefined;
  const writer: WriteBehind = own
    ? {
        run: async (sql, params) => void (await runBound(connection().getClient(), true, sql, params)),
        // One round trip per group, on the group commit's own connection: one statement is atomic
        // alone, several inserts become one statement (pg-one-statement.ts); anything else runs
        // in a pooled transaction.
        commit: async (statements) => {
          if (statements.length === 1) {
            const only = statements[0]!;
            // Bound in place: a copy, unless it is already one (a part of a shared list).
            return [await own.run(toPostgresPlaceholders(only.sql), only.at === undefined ? only.params.slice() : ownParams(only))];
          }
          const one = oneStatement(statements);
          if (one) return splitRows(await own.run(one.text, one.params), statements.length, one.only);
          return transaction(async (exec) => {
            const out: Rows[] = [];
            for (const st of statements) out.push(await exec(st.sql, ownParams(st)));
            return out;
          });
        },
        close: () => own.close(),
      }
    : new SqliteWriter(file);
  return {
    dialect,
    em: () => orm.em.fork() as unknown as EntityManager,
    execute: <T>(sql: string, params: unknown[] = []) => runBound<T>(connection().getClient(), pg, sql, params),
    transaction,
    commitWrites: (statements) => writer.commit(statements),
    writeBehind: (sql, params) => writer.run(sql, params),
    ping: async () => {
      await runBound(connection().getClient(), pg, 'select 1', []);
    },
    close: async () => {
      await writer.close();
      // A connection lost in the middle of a transaction can stay checked out of the pool, and
      // ending the pool waits for it: bounded, so a stop after a database outage still ends.
      await Promise.race([orm.close(true), sleep(3000, undefined, { ref: false })]);
    },
  };
}

/**
 * Applies every migration not yet recorded in `svc_migrations`, in the order given, in one
 * transaction. On PostgreSQL a transaction-scoped advisory lock keeps replicas that start together
 * from applying the same change twice.
 */
export async function migrate(store: Store, migrations: Migration[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (ids.has(m.id)) throw new Error(`migration id ${m.id} is declared twice`);
    ids.add(m.id);
  }
  const pg = store.dialect === 'postgresql';
  return store.transaction(async (exec) => {
    if (pg) await exec('select pg_advisory_xact_lock(737001)');
    await exec(`create table if not exists svc_migrations (id varchar(200) primary key, applied_at varchar(40) not null)`);
    const done = new Set((await exec<{ id: string }>('select id from svc_migrations')).map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      try {
        for (const sql of pg ? m.postgresql : m.sqlite) await exec(sql);
      } catch (err) {
        throw new Error(`migration ${m.id} failed: ${(err as Error).message}`);
      }
      await exec('insert into svc_migrations (id, applied_at) values (?, ?)', [m.id, new Date().toISOString()]);
      applied.push(m.id);
    }
    return applied;
  });
}
