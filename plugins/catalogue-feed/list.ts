import { createHash } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { Type, type CatalogueList } from '../../kernel/index.js';
import { verifyList } from './signing.js';

/** The one list format version this release reads; a list with another is refused as `unsupported_version`. */
export const listVersion = 1;

/** What the feed URL serves: the list's exact text and its signature (README "The list format"). */
const Envelope = Type.Object({
  format: Type.Literal('svc-catalogue-feed'),
  signature: Type.String({ maxLength: 200 }),
  list: Type.String(),
});

/** USD 1,000,000 per million tokens in micro-USD, the catalog's own ceiling on a price. */
const Price = Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()]);

const Entry = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 300 }),
  context_window: Type.Integer({ minimum: 1 }),
  output_limit: Type.Integer({ minimum: 1 }),
  input_micro_usd_per_mtok: Price,
  output_micro_usd_per_mtok: Price,
  images: Type.Boolean(),
  pdf: Type.Boolean(),
  tools: Type.Boolean(),
});

/** The catalog's provider name rule (lowercase letters, numbers, dashes). */
const providerName = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const List = Type.Object({
  version: Type.Integer(),
  sequence: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  issued_at: Type.String({ minLength: 10, maxLength: 40 }),
  providers: Type.Record(Type.String(), Type.Array(Entry, { maxItems: 10_000 })),
});

/** Why a fetched document is not applied; every code is a `catalogue_feed.check_failed` `error_code`. */
export class FeedError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

/** A list whose signature verified, with the digest of its signed text. */
export interface VerifiedList {
  list: CatalogueList;
  digest: string;
}

function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FeedError(what === 'envelope' ? 'malformed' : 'invalid_list', `the ${what} is not JSON`);
  }
}

/**
 * Checks a fetched document: envelope shape, then the Ed25519 signature over the list text against
 * the pinned keys, and only then the list itself (nothing unsigned is ever interpreted).
 */
export function openEnvelope(text: string, keys: readonly KeyObject[]): VerifiedList {
  const envelope = json(text, 'envelope');
  if (!Value.Check(Envelope, envelope)) throw new FeedError('malformed', 'not a signed catalogue feed document');
  if (!verifyList(envelope.list, envelope.signature, keys)) throw new FeedError('bad_signature', 'the signature does not verify with a pinned public key');
  const list = json(envelope.list, 'list');
  const version = (list as { version?: unknown } | null)?.version;
  if (version !== listVersion) throw new FeedError('unsupported_version', `list format version ${String(version)} is not ${listVersion}`);
  if (!Value.Check(List, list)) {
    const first = Value.Errors(List, list).First();
    throw new FeedError('invalid_list', `the list does not match the format${first ? ` at ${first.path || '/'}` : ''}`);
  }
  if (Number.isNaN(Date.parse(list.issued_at))) throw new FeedError('invalid_list', 'issued_at is not an ISO-8601 time');
  for (const [provider, entries] of Object.entries(list.providers)) {
    if (provider.length > 63 || !providerName.test(provider)) throw new FeedError('invalid_list', `"${provider.slice(0, 63)}" is not a provider name`);
    for (const e of entries) {
      if (e.output_limit > e.context_window) throw new FeedError('invalid_list', `${provider}:${e.id}: output_limit is above context_window`);
    }
  }
  return {
    list: { sequence: list.sequence, issuedAt: new Date(list.issued_at).toISOString(), providers: list.providers },
    digest: createHash('sha256').update(envelope.list, 'utf8').digest('hex'),
  };
}

/** Wraps a list's text and signature into the document a feed URL serves. */
export function envelopeText(listText: string, signature: string): string {
  return `${JSON.stringify({ format: 'svc-catalogue-feed', signature, list: listText }, null, 2)}\n`;
}
