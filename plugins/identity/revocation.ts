import type { Principal } from '../../kernel/index.js';
import type { Snapshot } from './snapshot.js';

/** Why a running request lost its access; logged, never shown to the caller (see `revokedError`). */
export type RevocationReason =
  | 'key_revoked'
  | 'person_suspended'
  | 'person_removed'
  | 'membership_suspended'
  | 'membership_removed'
  | 'session_ended';

/** What a running request acts for, as far as access goes: its principal and its credential. */
export interface Grant {
  principal: Principal;
  /** SHA-256 of the session token (as the snapshot keys it), for session callers. */
  sessionHash: string | null;
  /** When the session expires on its own: an expiry is not a revocation. */
  sessionExpiresAt: number;
}

/**
 * Whether `grant` still holds in `snap`, and if not, why. The same conditions that refuse a new
 * request with 401 invalid_api_key (resolver.ts), checked for a request already running: the key
 * is unrevoked, its owner is an active person and an active member of the workspace; a session
 * is still there. A session that simply reached its expiry time is left to finish: it was valid
 * when the request started and nobody took it away.
 *
 * @example
 * revocationOf({ principal, sessionHash: null, sessionExpiresAt: Infinity }, sync.current); // null or 'key_revoked'
 */
export function revocationOf(grant: Grant, snap: Snapshot): RevocationReason | null {
  const { principal } = grant;
  // The widest cause first: removing a member also revokes their keys, suspending a person ends their sessions.
  const person = snap.persons.get(principal.personId);
  if (!person) return 'person_removed';
  if (person.status !== 'active') return 'person_suspended';
  const membership = snap.memberships.get(principal.personId)?.get(principal.workspaceId);
  if (!membership) return 'membership_removed';
  if (membership.status !== 'active') return 'membership_suspended';
  if (principal.keyId !== null) {
    const key = snap.keysById.get(principal.keyId);
    if (!key || key.workspaceId !== principal.workspaceId || key.personId !== principal.personId) return 'key_revoked';
  }
  if (grant.sessionHash !== null && !snap.sessionsByHash.has(grant.sessionHash) && grant.sessionExpiresAt > snap.loadedAt) return 'session_ended';
  return null;
}
