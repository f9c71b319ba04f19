import type { AppliedCatalogue, ApplyOutcome, BuiltInCatalogue, CatalogueList, Store } from '../../kernel/index.js';

/** The signed feed list in force, as stored (one row, id 1) by migration catalog-004. */
export interface FeedRow extends AppliedCatalogue {
  providers: CatalogueList['providers'];
}

/** Reads and writes the one stored feed list; the write only wins over an older list. */
export class FeedRepo {
  constructor(private readonly store: Store) {}

  async current(): Promise<FeedRow | undefined> {
    const [r] = await this.store.execute('select * from catalog_feed_list where id = 1');
    if (!r) return undefined;
    return {
      sequence: Number(r.sequence),
      issuedAt: String(r.issued_at),
      digest: String(r.digest),
      appliedAt: new Date(String(r.applied_at)),
      providers: JSON.parse(String(r.providers)) as CatalogueList['providers'],
    };
  }

  /**
   * Stores the list if no list is stored or the stored one has a smaller sequence, in one
   * statement, so two replicas (or a scheduled and an admin's check) cannot both win or go back.
   */
  async saveIfNewer(list: CatalogueList, digest: string, now: Date): Promise<boolean> {
    const rows = await this.store.execute(
      `insert into catalog_feed_list (id, sequence, issued_at, digest, providers, applied_at) values (1, ?, ?, ?, ?, ?)
       on conflict (id) do update set sequence = excluded.sequence, issued_at = excluded.issued_at, digest = excluded.digest,
         providers = excluded.providers, applied_at = excluded.applied_at
       where catalog_feed_list.sequence < excluded.sequence
       returning sequence`,
      [list.sequence, list.issuedAt, digest, JSON.stringify(list.providers), now.toISOString()],
    );
    return rows.length > 0;
  }
}

/**
 * The catalog's side of signed catalogue updates (kernel contract BuiltInCatalogue): stores a newer
 * list, then `changed()` reloads this replica's snapshot and tells the others.
 */
export class FeedCatalogue implements BuiltInCatalogue {
  constructor(
    private readonly repo: FeedRepo,
    private readonly changed: () => Promise<void>,
    private readonly inForce: () => AppliedCatalogue | undefined,
  ) {}

  async apply(list: CatalogueList, digest: string): Promise<ApplyOutcome> {
    if (await this.repo.saveIfNewer(list, digest, new Date())) {
      await this.changed();
      return 'applied';
    }
    const stored = await this.repo.current();
    if (!stored || stored.sequence > list.sequence) return 'older';
    return stored.digest === digest ? 'unchanged' : 'conflict';
  }

  applied(): AppliedCatalogue | undefined {
    return this.inForce();
  }
}
