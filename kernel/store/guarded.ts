import type { Dependency } from '../health/dependency.js';
import type { Store } from './orm.js';

/** A read whose caller may give up at the deadline: its late answer changes nothing. */
const isRead = (sql: string): boolean => /^\s*(select|with)\b/i.test(sql);

/**
 * The store every plugin gets: each call runs under the database's deadline and pending bound
 * (kernel/health/dependency.ts). Reads and pings are abandoned at the deadline; writes and
 * transactions keep waiting for their real outcome (retrying a write that may still land would
 * apply it twice) but mark the database down meanwhile, so no model request is served.
 */
export function guardStore(store: Store, db: Dependency): Store {
  return {
    dialect: store.dialect,
    em: () => store.em(),
    execute: (sql, params) => db.call(() => store.execute(sql, params), { abandon: isRead(sql) }),
    writeBehind: (sql, params) => db.call(() => store.writeBehind(sql, params), { abandon: false }),
    transaction: (fn) => db.call(() => store.transaction(fn), { abandon: false }),
    commitWrites: (statements) => db.call(() => store.commitWrites(statements), { abandon: false }),
    ping: () => db.call(() => store.ping(), { abandon: true }),
    close: () => store.close(),
  };
}
