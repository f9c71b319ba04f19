import { defineToken } from '../container/tokens.js';

/** Who a request acts for: a key acts as its creator (SPEC.md Authentication 2). */
export interface Principal {
  personId: string;
  workspaceId: string;
  /** The API key used, or null for a person's session. */
  keyId: string | null;
  workspaceRole: 'admin' | 'member';
  instanceAdmin: boolean;
  via: 'key' | 'session';
}

/**
 * Resolves the caller of an HTTP request from its headers, without a database round trip.
 *
 * @example
 * const principal = identity.authenticate(req.headers); // throws GatewayError invalid_api_key
 */
export interface IdentityService {
  authenticate(headers: Record<string, string | string[] | undefined>): Principal;
  /** True while the person is an active member of the workspace (checked again before settle). */
  isActiveMember(personId: string, workspaceId: string): boolean;
}

export const IdentityToken = defineToken<IdentityService>('identity.service');
