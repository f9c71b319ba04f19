import { GatewayError, Roster, type Logger, type RequestContext } from '../../kernel/index.js';
import { credentialOf } from './resolver.js';
import { revocationOf, type Grant, type RevocationReason } from './revocation.js';
import { sha256 } from './secrets.js';
import type { Snapshot } from './snapshot.js';

interface Running extends Grant {
  rctx: RequestContext;
  keyPrefix: string | null;
  /** Its place in the roster (also in `rctx.state.runningSlot`, for `forget`). */
  slot: number;
}

/**
 * The same error for every way access can be taken away, as the 401 does for every bad
 * credential: the caller learns that access ended, not which check failed (the log says why).
 */
export const revokedError = (): GatewayError =>
  new GatewayError(
    'access_revoked',
    'Access was removed while this request ran: the API key was revoked, its owner suspended or removed from the workspace, or the session ended.',
  );

/**
 * The model requests running on this replica and what each acts for (SPEC.md Errors: 403
 * access_revoked, "access removed during the request"). `track` and `forget` are one map write
 * each on the request path; `recheck` runs when a new identity snapshot is in force (a change on
 * any replica, within a second) and stops every request whose access it no longer grants.
 *
 * @example
 * running.track(rctx, sync.current);  // after authenticate
 * running.forget(rctx);               // settle
 * running.recheck(newSnapshot);       // SnapshotSync onLoaded
 */
export class RunningRequests {
  private readonly requests = new Roster<Running>();

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.requests.size;
  }

  /**
   * Notes a request whose principal the authenticate phase has set. The check against `snap`
   * closes the gap in which a snapshot could have arrived between authenticate and now.
   */
  track(rctx: RequestContext, snap: Snapshot): void {
    const principal = rctx.state.principal;
    if (!principal) return;
    let sessionHash: string | null = null;
    let sessionExpiresAt = Number.POSITIVE_INFINITY;
    if (principal.via === 'session') {
      sessionHash = sha256(credentialOf(rctx.req.headers)?.token ?? '');
      sessionExpiresAt = snap.sessionsByHash.get(sessionHash)?.expiresAt ?? sessionExpiresAt;
    }
    const keyPrefix = principal.keyId === null ? null : (snap.keysById.get(principal.keyId)?.prefix ?? null);
    const r: Running = { rctx, principal, sessionHash, sessionExpiresAt, keyPrefix, slot: -1 };
    rctx.state.runningSlot = r.slot = this.requests.add(r);
    const reason = revocationOf(r, snap);
    if (reason) this.stop(r, reason);
  }

  forget(rctx: RequestContext): void {
    const slot = rctx.state.runningSlot;
    if (slot === undefined) return;
    rctx.state.runningSlot = undefined;
    const r = this.requests.at(slot);
    // A request stopped by `recheck` left already, and its slot may be another request's now.
    if (r?.rctx === rctx) this.requests.remove(slot, r);
  }

  /** Stops, once each, the running requests that `snap` no longer grants access. */
  recheck(snap: Snapshot): void {
    for (const r of this.requests.values()) {
      // A reply already written is over: nothing left to stop (settle forgets it in a moment).
      if (r.rctx.res.writableEnded) continue;
      const reason = revocationOf(r, snap);
      if (reason) this.stop(r, reason);
    }
  }

  private stop(r: Running, reason: RevocationReason): void {
    this.requests.remove(r.slot, r);
    const { principal } = r;
    this.log.info('request.access_revoked', { request_id: r.rctx.id, principal: principal.via, key_id: principal.keyId, key_prefix: r.keyPrefix, reason });
    r.rctx.stop(revokedError());
  }
}
