import type { FetchLike } from '@modelcontextprotocol/client';
import { GatewayError, type AdminApi, type CachePort, type CredentialVault, type Logger, type RetentionKind, type Store } from '../../../kernel/index.js';
import type { ToolCatalog, ToolServer } from '../catalog.js';
import { OAuthAccess } from './access.js';
import { Grants } from './grants.js';
import { guardedFetch } from './http.js';
import { PendingSignIns } from './pending.js';
import { signInRoutes } from './routes.js';

export { oauthMigrations } from './migrations.js';
export type { SignInState } from './grants.js';

/** The registration fields of a server that signs in with OAuth (POST …/tool-servers). */
export interface OAuthRegistration {
  auth?: 'none' | 'bearer' | 'oauth';
  bearer_token?: string;
  oauth_client_id?: string;
  oauth_client_secret?: string;
  oauth_scope?: string;
}

/** SPEC.md Retention: unfinished sign-ins are removed at the next run once past their expiry. */
export const signInRetention: RetentionKind = {
  kind: 'tool_signins', summary: 'Unfinished tool sign-ins', table: 'tool_signins', keyColumn: 'id', timeColumn: 'expires_at', defaultDays: 'expired',
};

export interface OAuthSettings {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
}

/** Checks a registration's auth fields before anything is stored; the OAuth settings, or null for another kind. */
export function oauthSettings(body: OAuthRegistration): OAuthSettings | null {
  const bad = (message: string, param: string) => new GatewayError('invalid_request', message, { param });
  const auth = body.auth ?? (body.bearer_token ? 'bearer' : 'none');
  const oauthFields = (['oauth_client_id', 'oauth_client_secret', 'oauth_scope'] as const).filter((f) => body[f] !== undefined);
  if (auth !== 'oauth') {
    if (oauthFields.length > 0) throw bad(`${oauthFields[0]} goes with auth "oauth".`, oauthFields[0]!);
    if (auth === 'bearer' && !body.bearer_token) throw bad('auth "bearer" needs bearer_token.', 'bearer_token');
    if (auth === 'none' && body.bearer_token) throw bad('bearer_token goes with auth "bearer".', 'bearer_token');
    return null;
  }
  if (body.bearer_token) throw bad('A server signs in with OAuth or takes a bearer token, not both.', 'bearer_token');
  if (body.oauth_client_secret && !body.oauth_client_id) throw bad('oauth_client_secret goes with oauth_client_id.', 'oauth_client_secret');
  return {
    ...(body.oauth_client_id ? { clientId: body.oauth_client_id } : {}),
    ...(body.oauth_client_secret ? { clientSecret: body.oauth_client_secret } : {}),
    ...(body.oauth_scope ? { scope: body.oauth_scope } : {}),
  };
}

/**
 * The MCP authorization (OAuth 2.1) sign-in of workspace tool servers: svc is the OAuth client,
 * a workspace admin signs in once in the browser, svc keeps and refreshes the tokens. Wired by
 * the tools plugin: `access` goes to the catalog (tokens at call time), `routes` to the admin API.
 */
export class OAuthSignIn {
  readonly grants: Grants;
  readonly pending: PendingSignIns;
  readonly access: OAuthAccess;
  private readonly fetch: FetchLike;

  constructor(
    store: Store,
    vault: CredentialVault,
    cache: CachePort,
    private readonly log: Logger,
    limits: { maxBytes: number; timeoutMs: number },
    allowed: (url: string) => Promise<boolean>,
    private readonly options: { ttlMs: number; publicUrl: string },
  ) {
    this.grants = new Grants(store, vault);
    this.pending = new PendingSignIns(store, vault);
    this.fetch = guardedFetch(allowed, limits);
    this.access = new OAuthAccess(this.grants, cache, this.fetch, log, limits.timeoutMs);
  }

  async attach(server: ToolServer, settings: OAuthSettings): Promise<void> {
    await this.grants.create(server.id, server.workspaceId, settings);
  }

  /** The server was removed: its sign-in goes with it. */
  async forget(serverId: string): Promise<void> {
    await this.pending.removeFor(serverId);
    await this.grants.remove(serverId);
  }

  routes(admin: AdminApi, catalog: ToolCatalog): void {
    signInRoutes(admin, { grants: this.grants, pending: this.pending, fetch: this.fetch, ttlMs: this.options.ttlMs, catalog, publicUrl: this.options.publicUrl, log: this.log });
  }
}
