import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata, StoredOAuthClientInformation } from '@modelcontextprotocol/client';
import type { CredentialVault, Store } from '../../../kernel/index.js';

export type SignInState = 'signed_in' | 'not_signed_in' | 'expired';

/** This OAuth client as one authorization server knows it. */
export interface OAuthClient {
  info: StoredOAuthClientInformation;
  /** The redirect URI it was registered with (null: entered by the admin, any). */
  redirectUri: string | null;
  /** Entered by the workspace admin: never dropped or replaced by svc. */
  entered: boolean;
}

/** Where a sign-in happened: what a token request (exchange, refresh) needs again. */
export interface Flow {
  authorizationServerUrl: string;
  metadata?: AuthorizationServerMetadata;
  resourceMetadata?: OAuthProtectedResourceMetadata;
  /** The RFC 8707 resource the tokens are for, as sent in the authorization request. */
  resource?: string;
  redirectUri: string;
  /** The client id the authorization request was made with. */
  clientId: string;
}

/**
 * Tokens as stored (decrypted only at the moment of use). `expiresAt` (epoch ms; absent when the
 * server gave no lifetime) is read back from the row's plain column, `obtainedAt` is when svc got them.
 */
export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  obtainedAt: number;
  expiresAt?: number;
  scope?: string;
}

/** One OAuth tool server's row; `version` counts writes of its tokens. */
export interface Grant {
  serverId: string;
  state: SignInState;
  version: number;
  scope: string | null;
  client: OAuthClient | null;
  flow: Flow | null;
  tokens: Tokens | null;
}

interface Row {
  server_id: string; workspace_id: string; client: string | null; scope: string | null; flow: string | null; tokens: string | null;
  state: string; version: number | string; access_expires_at: number | string | null; refreshable: number | boolean;
}

const context = (serverId: string) => `tools.oauth:${serverId}`;

/** The state a listing shows: a token that has run out with nothing to refresh it is `expired`. */
function stateOf(r: Row): SignInState {
  if (r.state !== 'signed_in') return r.state === 'expired' ? 'expired' : 'not_signed_in';
  const out = r.access_expires_at !== null && Number(r.access_expires_at) <= Date.now();
  return out && !Number(r.refreshable) ? 'expired' : 'signed_in';
}

/**
 * The sign-in of each OAuth tool server: its client registration, its tokens and their state,
 * in `tool_oauth`. Secrets are CredentialVault ciphertexts bound to the row; nothing here is
 * ever logged or returned by the admin API.
 */
export class Grants {
  constructor(private readonly store: Store, private readonly vault: CredentialVault) {}

  async create(serverId: string, workspaceId: string, o: { clientId?: string; clientSecret?: string; scope?: string }): Promise<void> {
    const client: OAuthClient | null = o.clientId ? { info: { client_id: o.clientId, ...(o.clientSecret ? { client_secret: o.clientSecret } : {}) }, redirectUri: null, entered: true } : null;
    await this.store.execute(
      'insert into tool_oauth (server_id, workspace_id, client, scope, flow, tokens, state, version, access_expires_at, refreshable, updated_at) values (?,?,?,?,?,?,?,?,?,?,?)',
      [serverId, workspaceId, client ? this.seal(serverId, client) : null, o.scope ?? null, null, null, 'not_signed_in', 0, null, 0, Date.now()],
    );
  }

  async get(serverId: string): Promise<Grant | null> {
    const [r] = await this.store.execute<Row>('select * from tool_oauth where server_id = ?', [serverId]);
    if (!r) return null;
    return {
      serverId, state: stateOf(r), version: Number(r.version), scope: r.scope,
      client: r.client ? (this.open(serverId, r.client) as OAuthClient) : null,
      flow: r.flow ? (JSON.parse(r.flow) as Flow) : null,
      tokens: r.tokens && r.state === 'signed_in' ? this.tokensOf(r) : null,
    };
  }

  /** The sign-in state of every OAuth server of a workspace (servers without OAuth are absent). */
  async states(workspaceId: string): Promise<Map<string, SignInState>> {
    const rows = await this.store.execute<Row>('select server_id, state, access_expires_at, refreshable from tool_oauth where workspace_id = ?', [workspaceId]);
    return new Map(rows.map((r) => [r.server_id, stateOf(r)]));
  }

  async saveClient(serverId: string, client: OAuthClient | null): Promise<void> {
    await this.store.execute('update tool_oauth set client = ?, updated_at = ? where server_id = ?', [client ? this.seal(serverId, client) : null, Date.now(), serverId]);
  }

  /**
   * Stores new tokens. With `ifVersion`, only when nobody wrote tokens since that version (a
   * refresh); false when another replica did first.
   */
  async saveTokens(serverId: string, flow: Flow, tokens: Tokens, ifVersion?: number): Promise<boolean> {
    const sql = `update tool_oauth set flow = ?, tokens = ?, state = 'signed_in', version = version + 1, access_expires_at = ?, refreshable = ?, updated_at = ?
      where server_id = ?${ifVersion === undefined ? '' : ' and version = ?'} returning server_id`;
    const params = [JSON.stringify(flow), this.seal(serverId, tokens), tokens.expiresAt ?? null, tokens.refreshToken ? 1 : 0, Date.now(), serverId];
    return (await this.store.execute(sql, ifVersion === undefined ? params : [...params, ifVersion])).length > 0;
  }

  /** The tokens no longer work (refresh refused): an admin must sign in again. Only if still at `version`. */
  async markExpired(serverId: string, version: number): Promise<void> {
    await this.store.execute("update tool_oauth set tokens = null, state = 'expired', version = version + 1, updated_at = ? where server_id = ? and version = ?", [Date.now(), serverId, version]);
  }

  async signOut(serverId: string): Promise<void> {
    await this.store.execute("update tool_oauth set tokens = null, state = 'not_signed_in', version = version + 1, access_expires_at = null, refreshable = 0, updated_at = ? where server_id = ?", [Date.now(), serverId]);
  }

  async remove(serverId: string): Promise<void> {
    await this.store.execute('delete from tool_oauth where server_id = ?', [serverId]);
  }

  private tokensOf(r: Row): Tokens {
    const t = this.open(r.server_id, r.tokens!) as Tokens;
    if (r.access_expires_at === null) delete t.expiresAt;
    else t.expiresAt = Number(r.access_expires_at);
    return t;
  }

  private seal(serverId: string, value: unknown): string {
    return this.vault.encrypt(JSON.stringify(value), context(serverId));
  }

  private open(serverId: string, stored: string): unknown {
    return JSON.parse(this.vault.decrypt(stored, context(serverId)));
  }
}
