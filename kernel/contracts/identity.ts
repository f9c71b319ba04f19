import { defineToken } from '../container/tokens.js';

/** Who a model request acts for: a key acts as its creator (SPEC.md Authentication 2). */
export interface Principal {
  personId: string;
  workspaceId: string;
  /** The API key used, or null for a person's session. */
  keyId: string | null;
  workspaceRole: 'admin' | 'member';
  instanceAdmin: boolean;
  via: 'key' | 'session';
}

/** Who calls the admin API: a signed-in person (session) or a key acting as its creator. */
export interface Caller {
  personId: string;
  instanceAdmin: boolean;
  via: 'key' | 'session';
  keyId: string | null;
  /** A key always acts in its own workspace; null for sessions. */
  keyWorkspaceId: string | null;
  /** The session token id, for sign-out. */
  sessionId: string | null;
}

/**
 * Resolves callers from request headers out of an in-memory snapshot (no database round trip per
 * request); the snapshot is refreshed on every change, on every replica.
 *
 * @example
 * const principal = identity.authenticate(req.headers); // throws GatewayError invalid_api_key
 */
export interface IdentityService {
  /** Model API: `Authorization: Bearer svc_…` or a session (bearer or cookie) with x-svc-workspace. */
  authenticate(headers: Record<string, string | string[] | undefined>): Principal;
  /** Admin API: the caller, or null when the request carries no credentials at all. */
  caller(headers: Record<string, string | string[] | undefined>): Caller | null;
  /** The person's role in a workspace, or null when not an active member. */
  roleIn(personId: string, workspaceId: string): 'admin' | 'member' | null;
  /** An unrevoked API key's workspace and owner, or undefined. */
  key(keyId: string): { workspaceId: string; personId: string } | undefined;
}

export const IdentityToken = defineToken<IdentityService>('identity.service');
