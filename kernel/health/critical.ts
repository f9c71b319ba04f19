import type { KernelConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { CachePort } from '../cache/port.js';
import type { Store } from '../store/orm.js';
import { Dependency, type Dependencies } from './dependency.js';

/** The database and the cache, with the deadlines and probe intervals of the kernel config. */
export function criticalDependencies(config: KernelConfig, store: Store, cache: CachePort, log: Logger): Dependencies {
  const database = new Dependency('database', () => store.ping(), log, {
    deadlineMs: config.database.timeoutMs,
    probeIntervalMs: config.database.probeIntervalMs,
    maxPending: config.database.maxPending,
    silentMs: config.database.silentMs,
  });
  const cacheDep = new Dependency('cache', () => cache.ping(), log, {
    deadlineMs: config.cache.timeoutMs,
    probeIntervalMs: config.cache.probeIntervalMs,
    // Redis pipelines commands on one connection; this bounds what waits on a silent one.
    maxPending: 2000,
    silentMs: config.cache.silentMs,
  });
  return { database, cache: cacheDep, firstDown: () => (database.down ? database : cacheDep.down ? cacheDep : null) };
}
