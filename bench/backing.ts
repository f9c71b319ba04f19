import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';

/** Where the scale-out shape's stores are; the same defaults as the test harness. */
export const postgresAdminUrl = process.env.BENCH_POSTGRES_URL ?? process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh PostgreSQL database and Redis key prefix for one svc, dropped afterwards. */
export interface ScaleOutBacking {
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  drop(): Promise<void>;
}

/** True when something at `url` answers a Redis PING with PONG within `ms`. */
export function redisAnswers(url: string, ms = 2000): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (b) => done(b.toString('utf8').startsWith('+PONG') || b.toString('utf8').startsWith('-NOAUTH')));
  });
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Creates database `svc_bench_<random>`; throws with a readable reason when PostgreSQL or Redis
 * cannot be reached (the caller then skips the scale-out shape).
 */
export async function createScaleOutBacking(): Promise<ScaleOutBacking> {
  if (!(await redisAnswers(redisUrl))) throw new Error(`Redis does not answer at ${redisUrl}`);
  const tag = randomBytes(5).toString('hex');
  const db = `svc_bench_${tag}`;
  try {
    await admin((c) => c.query(`create database ${db}`));
  } catch (err) {
    throw new Error(`PostgreSQL at ${postgresAdminUrl.replace(/\/\/[^@]*@/, '//')}: ${(err as Error).message}`);
  }
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${db}`;
  return {
    databaseUrl: url.toString(),
    redisUrl,
    redisPrefix: `svcbench:${tag}:`,
    drop: async () => {
      await admin((c) => c.query(`drop database if exists ${db} with (force)`));
    },
  };
}
