import { randomBytes, type KeyObject } from 'node:crypto';
import type {
  BuiltInCatalogue, CachePort, CatalogueFeed, CatalogueFeedCheck, CatalogueFeedStatus, Logger, SnapshotSync,
} from '../../kernel/index.js';
import type { FeedConfig } from './config.js';
import { fetchList } from './fetch-list.js';
import { FeedError, openEnvelope } from './list.js';
import type { FeedState, StateRepo } from './state.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    /** A newer signed list was applied (on every replica through the catalog's snapshot sync). */
    'catalogue_feed.applied': { sequence: number; issued_at: string; previous_sequence: number | null; providers: number; models: number };
    /** The list fetched is the one already applied. */
    'catalogue_feed.unchanged': { sequence: number };
    /** Error level for `bad_signature`, `older_list`, `sequence_conflict`; warn otherwise. Never the URL. */
    'catalogue_feed.check_failed': { error_code: string; http_status: number | null; sequence: number | null; applied_sequence: number | null };
  }
}

/** Codes of lists that someone may have tampered with or replayed: error level (SPEC.md Events). */
const alarming = new Set(['bad_signature', 'older_list', 'sequence_conflict']);

/** The cache key whose holder runs this interval's check (one replica per interval). */
const leaseKey = 'catalogue-feed:lease';

export interface FeedDeps {
  config: FeedConfig;
  keys: KeyObject[];
  sync: SnapshotSync<FeedState>;
  repo: StateRepo;
  catalogue: BuiltInCatalogue;
  cache: CachePort;
  log: Logger;
}

/**
 * Signed catalogue updates: a timer on every replica, a cache lease so that one replica fetches per
 * interval, the check itself (fetch, verify, apply through the catalog), and the shared record of
 * the last check. Off (no URL in force) it fetches nothing and logs nothing.
 */
export class FeedService implements CatalogueFeed {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<CatalogueFeedCheck> | undefined;
  private readonly holder = randomBytes(8).toString('hex');

  constructor(private readonly d: FeedDeps) {}

  /** The URL in force: the admin's setting when there is one, else the config's; '' is off. */
  url(): string {
    return this.d.sync.current.adminUrl ?? this.d.config.url;
  }

  status(): CatalogueFeedStatus {
    const on = this.url() !== '';
    const applied = this.d.catalogue.applied();
    return {
      on,
      source: on ? (this.d.sync.current.adminUrl === undefined ? 'config' : 'admin') : null,
      lastCheck: this.d.sync.current.lastCheck,
      applied: applied ? { sequence: applied.sequence, issuedAt: applied.issuedAt, appliedAt: applied.appliedAt } : null,
    };
  }

  /** Ticks several times per interval (at most every minute), so a replica that died holding the lease is replaced soon. */
  start(): void {
    const tickMs = Math.min(60_000, Math.max(50, Math.floor(this.d.config.intervalMs / 4)));
    this.timer = setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** A scheduled check, if on, none is running here, and this replica wins the interval's lease. */
  private async tick(): Promise<void> {
    if (this.url() === '' || this.running) return;
    let won = false;
    try {
      won = await this.d.cache.setIfAbsent(leaseKey, this.holder, this.d.config.intervalMs);
    } catch {
      // Cache unreachable: /healthz says so; without the lease no replica fetches, and none is logged.
      return;
    }
    if (won) await this.run().catch(() => undefined);
  }

  /** An admin's check now: takes the lease for a whole interval (the others wait), then checks. */
  async checkNow(): Promise<CatalogueFeedCheck> {
    await this.d.cache.set(leaseKey, this.holder, this.d.config.intervalMs).catch(() => undefined);
    await this.running?.catch(() => undefined);
    return this.run();
  }

  private run(): Promise<CatalogueFeedCheck> {
    const check = this.check().finally(() => {
      if (this.running === check) this.running = undefined;
    });
    this.running = check;
    return check;
  }

  private async check(): Promise<CatalogueFeedCheck> {
    const url = this.url();
    const before = this.d.catalogue.applied()?.sequence ?? null;
    let sequence: number | null = null;
    let result: CatalogueFeedCheck;
    try {
      const text = await fetchList(url, this.d.config.fetchTimeoutMs, this.d.config.maxBytes);
      const { list, digest } = openEnvelope(text, this.d.keys);
      sequence = list.sequence;
      let outcome;
      try {
        outcome = await this.d.catalogue.apply(list, digest);
      } catch {
        throw new FeedError('apply_failed', 'the list could not be stored');
      }
      if (outcome === 'older') throw new FeedError('older_list', 'the list is older than the one applied');
      if (outcome === 'conflict') throw new FeedError('sequence_conflict', 'another list with this sequence is applied');
      const models = Object.values(list.providers).reduce((n, e) => n + e.length, 0);
      if (outcome === 'applied') {
        this.d.log.info('catalogue_feed.applied', { sequence, issued_at: list.issuedAt, previous_sequence: before, providers: Object.keys(list.providers).length, models });
      } else this.d.log.info('catalogue_feed.unchanged', { sequence });
      result = { at: new Date(), outcome, errorCode: null, sequence };
    } catch (err) {
      const e = err instanceof FeedError ? err : new FeedError('error', 'unexpected failure');
      const fields = { error_code: e.code, http_status: e.httpStatus ?? null, sequence, applied_sequence: this.d.catalogue.applied()?.sequence ?? before };
      if (alarming.has(e.code)) this.d.log.error('catalogue_feed.check_failed', fields);
      else this.d.log.warn('catalogue_feed.check_failed', fields);
      result = { at: new Date(), outcome: 'failed', errorCode: e.code, sequence };
    }
    try {
      await this.d.repo.saveCheck(result);
      await this.d.sync.changed();
    } catch {
      // The database is down: the outcome was logged; the shared record catches up at the next check.
    }
    return result;
  }
}
