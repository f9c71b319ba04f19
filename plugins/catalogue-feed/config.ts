import type { KeyObject } from 'node:crypto';
import { GatewayError, Type, type Static } from '../../kernel/index.js';
import { parsePublicKey } from './signing.js';

export const configSchema = Type.Object(
  {
    /** The feed URL; '' (default) means off unless an instance admin sets one (the admin's setting wins). */
    url: Type.String({ maxLength: 2000, default: '' }),
    /** Ed25519 public keys (raw 32 bytes, base64) a list must be signed with; several for a key rotation. */
    publicKeys: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 8, default: [] }),
    /** How often a list is fetched (by one replica per interval). */
    intervalMs: Type.Integer({ minimum: 200, default: 21_600_000 }),
    /** Longest a fetch may take, body included. */
    fetchTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
    /** Largest feed document read. */
    maxBytes: Type.Integer({ minimum: 1024, default: 8 * 1024 * 1024 }),
    /** Safety reload of the shared settings and last check, for change messages lost while the cache was away. */
    reloadIntervalMs: Type.Integer({ minimum: 200, default: 30_000 }),
  },
  { additionalProperties: false, default: {} },
);

export type FeedConfig = Static<typeof configSchema>;

/** A feed URL as accepted from config or the admin API: http(s), no user:password. */
export function feedUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an http:// or https:// URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (u.username || u.password) return 'must not hold a user name or password';
  return undefined;
}

/** The admin API's check of a URL: 400 invalid_request naming `url`. */
export function checkAdminUrl(url: string, keys: readonly KeyObject[]): void {
  const problem = feedUrlProblem(url);
  if (problem) throw new GatewayError('invalid_request', `url ${problem}.`, { param: 'url' });
  if (keys.length === 0) {
    throw new GatewayError('invalid_request', 'No public key is pinned (plugins["catalogue-feed"].config.publicKeys): a feed cannot be verified.', { param: 'url' });
  }
}

/** Pinned keys and the config URL, checked at boot: a bad value stops start-up with a message naming the field. */
export function loadKeys(config: FeedConfig): KeyObject[] {
  const field = 'plugins["catalogue-feed"].config';
  const keys = config.publicKeys.map((text, i) => {
    try {
      return parsePublicKey(text);
    } catch (err) {
      throw new Error(`${field}.publicKeys[${i}]: ${(err as Error).message}`);
    }
  });
  if (config.url) {
    const problem = feedUrlProblem(config.url);
    if (problem) throw new Error(`${field}.url ${problem}`);
    if (keys.length === 0) throw new Error(`${field}.url is set but publicKeys is empty: a feed cannot be verified without a pinned key`);
  }
  return keys;
}
