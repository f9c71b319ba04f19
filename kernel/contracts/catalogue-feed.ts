import { defineToken } from '../container/tokens.js';

/**
 * One priced model of a built-in provider, as the committed catalogue and a signed feed list carry
 * it. Prices are integer micro-USD per million tokens; `null` means unpriced (never called).
 */
export interface CatalogueEntry {
  id: string;
  context_window: number;
  output_limit: number;
  input_micro_usd_per_mtok: number | null;
  output_micro_usd_per_mtok: number | null;
  images: boolean;
  pdf: boolean;
  tools: boolean;
}

/** A verified price list of a catalogue feed (plugins/catalogue-feed/README.md documents the format). */
export interface CatalogueList {
  /** Strictly increasing per publisher: a list is newer than another when its sequence is larger. */
  sequence: number;
  /** ISO-8601 time the publisher issued it (informational; order comes from `sequence`). */
  issuedAt: string;
  /** Built-in provider name → its complete model list; providers not named keep what they had. */
  providers: Record<string, CatalogueEntry[]>;
}

/** The feed list the catalog has in force over its committed catalogue. */
export interface AppliedCatalogue {
  sequence: number;
  issuedAt: string;
  /** SHA-256 (hex) of the signed list text, to tell a replay of the same list from a conflicting one. */
  digest: string;
  appliedAt: Date;
}

/** What `BuiltInCatalogue.apply` did: `applied`, or why not (`unchanged`: same list; `older`: not newer; `conflict`: same sequence, other content). */
export type ApplyOutcome = 'applied' | 'unchanged' | 'older' | 'conflict';

/**
 * The built-in providers' priced catalogue as a feed may replace it. Provided by the catalog
 * plugin; used by the catalogue-feed plugin. `apply` is atomic across replicas (a conditional write:
 * only a list newer than the one stored wins), reloads this replica's snapshot before it returns and
 * tells the other replicas, which pick it up within a second. Admins' hides and re-prices stay in
 * force over any list.
 *
 * @example
 * const outcome = await catalogue.apply(list, digest); // 'applied' | 'unchanged' | 'older' | 'conflict'
 * catalogue.applied()?.sequence;                       // the list in force on this replica
 */
export interface BuiltInCatalogue {
  apply(list: CatalogueList, digest: string): Promise<ApplyOutcome>;
  /** The applied list this replica's snapshot holds; undefined while the committed catalogue is in force. */
  applied(): AppliedCatalogue | undefined;
}

export const BuiltInCatalogueToken = defineToken<BuiltInCatalogue>('catalog.built-in-catalogue');

/** The outcome of one feed check, as every replica sees it. */
export interface CatalogueFeedCheck {
  at: Date;
  outcome: 'applied' | 'unchanged' | 'failed';
  /** Set when failed: `bad_signature`, `older_list`, `unreachable`, … (plugins/catalogue-feed/README.md). */
  errorCode: string | null;
  /** The sequence of the list fetched, when one could be read. */
  sequence: number | null;
}

/** Whether price updates are on and how the last check went: for diagnostics and the admin page. */
export interface CatalogueFeedStatus {
  on: boolean;
  /** Where the URL in force comes from; null while off. Never the URL itself (it may carry a token). */
  source: 'config' | 'admin' | null;
  lastCheck: CatalogueFeedCheck | null;
  applied: Pick<AppliedCatalogue, 'sequence' | 'issuedAt' | 'appliedAt'> | null;
}

/**
 * Signed price catalogue updates (SPEC.md Versioning 4). Provided by the catalogue-feed plugin;
 * `status()` answers from memory, so a diagnostics bundle can be written with the database down.
 *
 * @example
 * const feed = ctx.optional(CatalogueFeedToken);
 * bundle.price_updates = feed ? feed.status() : { on: false };
 */
export interface CatalogueFeed {
  status(): CatalogueFeedStatus;
}

export const CatalogueFeedToken = defineToken<CatalogueFeed>('catalogue-feed.status');
