import type { AuthProvider, FetchLike, OAuthTokens } from '@modelcontextprotocol/client';
import { randomId, type CachePort, type Logger } from '../../../kernel/index.js';
import type { ToolServer } from '../catalog.js';
import { mcp, ToolServerFailure } from '../mcp.js';
import { failureKind } from './failures.js';
import { keptTokens } from './finish.js';
import type { Grant, Grants, Tokens } from './grants.js';

declare module '../../../kernel/index.js' {
  interface LogEvents {
    'tools.token_refreshed': { server_id: string };
    /** The authorization server refused the refresh (`kind` is its OAuth error code): an admin must sign in again. */
    'tools.sign_in_expired': { server_id: string; kind: string };
    /** A refresh that could not be tried or answered (unreachable, timeout…): the sign-in stays, the call fails. */
    'tools.token_refresh_failed': { server_id: string; kind: string };
  }
}

/**
 * Whether to refresh before using the token: within 30 s of its expiry (so it does not run out
 * mid-call), or within half its lifetime for short-lived tokens (else every use would refresh).
 */
function runningOut(t: Tokens): boolean {
  if (!t.refreshToken || t.expiresAt === undefined) return false;
  return t.expiresAt - Math.min(30_000, (t.expiresAt - t.obtainedAt) / 2) <= Date.now();
}

interface Current {
  tokens: Tokens;
  version: number;
}

/** Kinds a failed refresh passes on to the model's error result. */
const passedOn = new Set(['timeout', 'unreachable', 'redirect', 'too_large']);

/**
 * The access token of an OAuth tool server at the moment of a call, as an SDK `AuthProvider`:
 * refreshed with the refresh token when it runs out (or when the server answers 401), one
 * refresh at a time across replicas (a cache lock; the loser reads the winner's tokens, so a
 * rotating refresh token is used once). A refusal marks the server `expired` and the call fails
 * with `sign_in` (the model is told the tool cannot be used right now); tokens never leave this
 * object except in the Authorization header to the tool server.
 */
export class OAuthAccess {
  private readonly refreshing = new Map<string, Promise<Current>>();

  constructor(
    private readonly grants: Grants,
    private readonly cache: CachePort,
    private readonly fetch: FetchLike,
    private readonly log: Logger,
    private readonly timeoutMs: number,
  ) {}

  /** null: the server does not use OAuth. Throws ToolServerFailure `sign_in` when it is not signed in. */
  async authFor(s: ToolServer): Promise<AuthProvider | null> {
    const grant = await this.grants.get(s.id);
    if (!grant) return null;
    let current = usable(grant);
    return {
      token: async () => {
        if (runningOut(current.tokens)) current = await this.refresh(s.id, current.version);
        return current.tokens.accessToken;
      },
      onUnauthorized: async () => {
        current = await this.refresh(s.id, current.version);
      },
    };
  }

  /** One refresh per server in this process at a time; callers waiting on it share its result. */
  private refresh(serverId: string, seen: number): Promise<Current> {
    let p = this.refreshing.get(serverId);
    if (!p) {
      p = this.refreshLocked(serverId, seen).finally(() => this.refreshing.delete(serverId));
      this.refreshing.set(serverId, p);
    }
    return p;
  }

  private async refreshLocked(serverId: string, seen: number): Promise<Current> {
    const lock = `tools:oauth-refresh:${serverId}`;
    const me = randomId(9, 'base64url');
    const deadline = Date.now() + this.timeoutMs;
    while (!(await this.cache.setIfAbsent(lock, me, this.timeoutMs))) {
      // Another replica is refreshing: its tokens will do once written.
      const g = await this.grants.get(serverId);
      if (!g || g.version !== seen) return usable(g);
      if (Date.now() >= deadline) throw new ToolServerFailure('timeout');
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      const g = await this.grants.get(serverId);
      if (!g || g.version !== seen) return usable(g); // refreshed, signed in again or out meanwhile
      return await this.refreshNow(g);
    } finally {
      if ((await this.cache.get(lock).catch(() => null)) === me) await this.cache.del(lock).catch(() => {});
    }
  }

  private async refreshNow(g: Grant): Promise<Current> {
    const { tokens, flow, client } = g;
    if (!tokens?.refreshToken || !flow || !client) {
      await this.grants.markExpired(g.serverId, g.version);
      this.log.warn('tools.sign_in_expired', { server_id: g.serverId, kind: 'no_refresh_token' });
      throw new ToolServerFailure('sign_in');
    }
    let fresh: OAuthTokens;
    try {
      fresh = await (await mcp()).refreshAuthorization(flow.authorizationServerUrl, {
        clientInformation: client.info, refreshToken: tokens.refreshToken, fetchFn: this.fetch,
        ...(flow.metadata ? { metadata: flow.metadata } : {}), ...(flow.resource ? { resource: flow.resource } : {}),
      });
    } catch (err) {
      const kind = failureKind(err);
      if (kind.startsWith('oauth_') && kind !== 'oauth_server_error' && kind !== 'oauth_temporarily_unavailable') {
        await this.grants.markExpired(g.serverId, g.version);
        this.log.warn('tools.sign_in_expired', { server_id: g.serverId, kind: kind.slice(6) });
        throw new ToolServerFailure('sign_in');
      }
      this.log.warn('tools.token_refresh_failed', { server_id: g.serverId, kind });
      throw new ToolServerFailure(passedOn.has(kind) ? (kind as 'timeout') : 'protocol');
    }
    const next = keptTokens(fresh, tokens.refreshToken);
    if (!(await this.grants.saveTokens(g.serverId, flow, next, g.version))) return usable(await this.grants.get(g.serverId));
    this.log.info('tools.token_refreshed', { server_id: g.serverId });
    return { tokens: next, version: g.version + 1 };
  }
}

function usable(g: Grant | null): Current {
  if (!g || g.state !== 'signed_in' || !g.tokens) throw new ToolServerFailure('sign_in');
  return { tokens: g.tokens, version: g.version };
}
