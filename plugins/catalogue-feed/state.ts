import type { CatalogueFeedCheck, Migration, Store } from '../../kernel/index.js';

/** The cache channel on which a replica announces a settings change or a new check result. */
export const changeChannel = 'catalogue-feed.changed';

// One row (id 1): the instance admin's URL setting and the last check, shared by every replica.
// admin_set 0: the config's `url` applies; 1: `admin_url` applies ('' = turned off by the admin).
const table = `create table catalogue_feed_state (
  id integer primary key,
  admin_set integer not null default 0,
  admin_url varchar(2000) not null default '',
  checked_at varchar(40),
  outcome varchar(20),
  error_code varchar(40),
  sequence bigint,
  updated_at varchar(40) not null
)`;

export const migrations: Migration[] = [{ id: 'catalogue-feed-001-state', sqlite: [table], postgresql: [table] }];

/** What every replica holds in memory (SnapshotSync): the admin's setting and the last check. */
export interface FeedState {
  /** undefined: no admin setting (config applies); '' turned off by an admin; else the admin's URL. */
  adminUrl: string | undefined;
  lastCheck: CatalogueFeedCheck | null;
}

export const emptyState: FeedState = { adminUrl: undefined, lastCheck: null };

/** SQL for the state row; upserts keep it at one row whichever replica writes first. */
export class StateRepo {
  constructor(private readonly store: Store) {}

  async load(): Promise<FeedState> {
    const [r] = await this.store.execute('select * from catalogue_feed_state where id = 1');
    if (!r) return emptyState;
    const lastCheck: CatalogueFeedCheck | null = r.checked_at
      ? {
          at: new Date(String(r.checked_at)),
          outcome: String(r.outcome) as CatalogueFeedCheck['outcome'],
          errorCode: r.error_code === null ? null : String(r.error_code),
          sequence: r.sequence === null ? null : Number(r.sequence),
        }
      : null;
    return { adminUrl: Number(r.admin_set) === 1 ? String(r.admin_url) : undefined, lastCheck };
  }

  /** `undefined` removes the admin's setting (the config's URL applies again). */
  async saveAdminUrl(url: string | undefined, now: Date): Promise<void> {
    await this.store.execute(
      `insert into catalogue_feed_state (id, admin_set, admin_url, updated_at) values (1, ?, ?, ?)
       on conflict (id) do update set admin_set = excluded.admin_set, admin_url = excluded.admin_url, updated_at = excluded.updated_at`,
      [url === undefined ? 0 : 1, url ?? '', now.toISOString()],
    );
  }

  async saveCheck(check: CatalogueFeedCheck): Promise<void> {
    const at = check.at.toISOString();
    await this.store.execute(
      `insert into catalogue_feed_state (id, checked_at, outcome, error_code, sequence, updated_at) values (1, ?, ?, ?, ?, ?)
       on conflict (id) do update set checked_at = excluded.checked_at, outcome = excluded.outcome, error_code = excluded.error_code,
         sequence = excluded.sequence, updated_at = excluded.updated_at`,
      [at, check.outcome, check.errorCode, check.sequence, at],
    );
  }
}
