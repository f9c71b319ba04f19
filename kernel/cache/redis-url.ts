import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * The Redis deployments `cache.url` (SVC_REDIS_URL) can name:
 *
 * - one server: `redis://[user:password@]host[:port][/db]` (`rediss://` for TLS);
 * - a Sentinel set: `redis+sentinel://[user:password@]s1[:port],s2[:port],…/<master name>[/db]`,
 *   sentinel port 26379 by default; the user and password are the data nodes'; sentinels that
 *   want their own give `?sentinelUsername=…&sentinelPassword=…` (`rediss+sentinel://` for TLS
 *   to both);
 * - a Cluster: `redis+cluster://[user:password@]n1[:port],n2[:port],…` (any reachable nodes, the
 *   rest are discovered; port 6379 by default; database 0 only, as Cluster has no others).
 *
 * @example
 * parseRedisUrl('redis+sentinel://:pw@10.0.0.1,10.0.0.2:26380/mymaster/2')
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; nodes: HostPort[]; master: string; db: number; auth: Auth; sentinelAuth: Auth; tls: boolean }
  | { kind: 'cluster'; nodes: HostPort[]; auth: Auth; tls: boolean };

interface HostPort {
  host: string;
  port: number;
}
interface Auth {
  username?: string;
  password?: string;
}

const shape = /^(rediss?)\+(sentinel|cluster):\/\/(?:([^@/]*)@)?([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/;

function fail(url: string, why: string): never {
  // The URL may hold a password: name the problem, never echo the value.
  throw new Error(`cache: invalid Redis URL (${url.split('://')[0]}://…): ${why}`);
}

function hosts(url: string, list: string, port: number): HostPort[] {
  return list.split(',').map((entry) => {
    // [v6]:port, host:port or host alone.
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(entry.trim());
    if (!m) fail(url, `bad host "${entry}"`);
    return { host: m[1] ?? m[2]!, port: m[3] ? Number(m[3]) : port };
  });
}

function userInfo(raw: string | undefined): Auth {
  if (!raw) return {};
  const at = raw.indexOf(':');
  const user = decodeURIComponent(at === -1 ? raw : raw.slice(0, at));
  const password = at === -1 ? undefined : decodeURIComponent(raw.slice(at + 1));
  return { ...(user ? { username: user } : {}), ...(password ? { password } : {}) };
}

export function parseRedisUrl(url: string): RedisTarget {
  const m = shape.exec(url);
  if (!m) {
    if (/^rediss?:\/\//.test(url)) return { kind: 'single', url };
    fail(url, 'expected redis://, rediss://, redis+sentinel:// or redis+cluster://');
  }
  const [, scheme, kind, auth, list, path, query] = m;
  const tls = scheme === 'rediss';
  const params = new URLSearchParams(query ?? '');
  if (kind === 'cluster') {
    if (path && path !== '/' && path !== '/0') fail(url, 'a Cluster has database 0 only');
    return { kind, nodes: hosts(url, list!, 6379), auth: userInfo(auth), tls };
  }
  const [master, db] = (path ?? '').split('/').filter(Boolean);
  if (!master) fail(url, 'the master name is missing (redis+sentinel://hosts/<master name>[/db])');
  if (db !== undefined && !/^\d+$/.test(db)) fail(url, `bad database "${db}"`);
  const sentinelAuth: Auth = {};
  if (params.get('sentinelUsername')) sentinelAuth.username = params.get('sentinelUsername')!;
  if (params.get('sentinelPassword')) sentinelAuth.password = params.get('sentinelPassword')!;
  return { kind: 'sentinel', nodes: hosts(url, list!, 26379), master: decodeURIComponent(master), db: Number(db ?? 0), auth: userInfo(auth), sentinelAuth, tls };
}

/** A connected client of any deployment kind; both kinds answer the same commands. */
export type RedisClient = Redis | Cluster;

/**
 * Opens a client for `target` with the service's options (timeouts, retry strategy): a Cluster
 * client retries and refreshes its slot map on its own, a Sentinel client asks the sentinels for
 * the current master on every (re)connect, so a failover costs a reconnect, not a restart.
 */
export function connect(target: RedisTarget, options: RedisOptions): RedisClient {
  if (target.kind === 'single') return new Redis(target.url, options);
  const tls = target.tls ? { tls: {} } : {};
  const retry = (times: number): number | null => options.retryStrategy?.(times) ?? null;
  if (target.kind === 'sentinel') {
    return new Redis({
      ...options,
      ...target.auth,
      ...tls,
      sentinels: target.nodes,
      name: target.master,
      db: target.db,
      sentinelUsername: target.sentinelAuth.username,
      sentinelPassword: target.sentinelAuth.password,
      enableTLSForSentinelMode: target.tls,
      sentinelRetryStrategy: retry,
    });
  }
  return new Cluster(target.nodes, {
    redisOptions: { ...options, ...target.auth, ...tls },
    clusterRetryStrategy: retry,
    slotsRefreshTimeout: options.connectTimeout,
  });
}

/**
 * Every key and channel prefix on a Cluster is one hash tag (`{svc:}`), so the keys one script
 * touches always share a slot. The scripts join counters of every scope (instance, workspace,
 * member, key) with the holds set, so no finer tag could keep them together: the whole service
 * lives in one slot, and the Cluster brings failover rather than spreading svc's keys.
 */
export function clusterPrefix(prefix: string): string {
  return /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
}
