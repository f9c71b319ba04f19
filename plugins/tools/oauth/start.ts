import { mcp } from '../mcp.js';
import { randomBytes } from 'node:crypto';
import type { FetchLike, OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { ToolServer } from '../catalog.js';
import { signInFailure } from './failures.js';
import type { Flow, Grants, OAuthClient } from './grants.js';
import { sha256, type PendingSignIns } from './pending.js';

export interface SignInEnv {
  grants: Grants;
  pending: PendingSignIns;
  /** The guarded fetch (allow-list, no redirects, size and time limits). */
  fetch: FetchLike;
  /** How long a started sign-in may wait for its callback. */
  ttlMs: number;
}

/** Where the authorization server sends the browser back, and svc's Client ID Metadata Document (https only). */
export interface ClientEndpoints {
  redirectUri: string;
  clientMetadataUrl?: string;
}

/** svc as an OAuth client: what it registers (RFC 7591) or publishes (Client ID Metadata Document). */
export function clientMetadata(redirectUri: string, published: boolean): OAuthClientMetadata {
  return {
    client_name: 'svc', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    // A published document cannot carry a secret: that client is public (PKCE protects its codes).
    ...(published ? { token_endpoint_auth_method: 'none' } : {}),
  };
}

/**
 * What the tool server's 401 says: the protected-resource metadata URL (RFC 9728 §5.1) and the
 * scope it wants. A server answering without 401 gives no hint; discovery then uses the
 * well-known URL.
 */
async function challenge(server: ToolServer, fetchFn: FetchLike): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const init: RequestInit = server.transport === 'sse'
    ? { method: 'GET', headers: { accept: 'text/event-stream' } }
    : { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }) };
  const res = await fetchFn(server.url, init);
  await res.body?.cancel().catch(() => {});
  if (res.status !== 401) return {};
  const { resourceMetadataUrl, scope } = (await mcp()).extractWWWAuthenticateParams(res);
  return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
}

/**
 * Starts the MCP authorization flow for one server with the SDK's `auth()`: protected-resource
 * and authorization-server discovery (issuer checked), the client (a stored registration, the
 * admin's client id, a Client ID Metadata Document URL when the server supports them, else
 * dynamic registration), PKCE S256, `resource` and `state`. The provider below only captures
 * what `auth()` hands it; the PKCE verifier and the discovery go into the unfinished sign-in,
 * a new registration onto the server's row. Returns the URL to send the admin's browser to.
 */
export async function startSignIn(env: SignInEnv, server: ToolServer, who: { personId: string; browser: string | null }, ends: ClientEndpoints): Promise<{ url: string; expiresAt: number; stateHash: string }> {
  const grant = await env.grants.get(server.id);
  if (!grant) throw new Error('not an OAuth tool server');
  const state = randomBytes(32).toString('base64url');
  const reusable = grant.client && (grant.client.entered || grant.client.redirectUri === ends.redirectUri) ? grant.client : null;
  let client: OAuthClient | null = reusable;
  const captured: { url?: URL; verifier?: string; discovery?: OAuthDiscoveryState; resource?: string } = {};
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return ends.redirectUri;
    },
    ...(ends.clientMetadataUrl ? { clientMetadataUrl: ends.clientMetadataUrl } : {}),
    get clientMetadata() {
      return clientMetadata(ends.redirectUri, false);
    },
    state: () => state,
    // An entered client id is bound to whichever authorization server the server names.
    clientInformation: (ctx) => (client ? (client.entered ? { ...client.info, issuer: ctx?.issuer } : client.info) : undefined),
    saveClientInformation: (info) => {
      client = { info, redirectUri: ends.redirectUri, entered: client?.entered ?? false };
    },
    tokens: () => undefined,
    saveTokens: () => {},
    redirectToAuthorization: (url) => {
      captured.url = url;
    },
    saveCodeVerifier: (v) => {
      captured.verifier = v;
    },
    codeVerifier: () => captured.verifier ?? '',
    saveDiscoveryState: (s) => {
      captured.discovery = s;
    },
    discoveryState: () => undefined,
    saveResourceUrl: (r) => {
      captured.resource = r;
    },
    invalidateCredentials: (scope) => {
      if ((scope === 'all' || scope === 'client') && client && !client.entered) client = null;
    },
  };
  try {
    const hint = await challenge(server, env.fetch);
    const scope = grant.scope ?? hint.scope;
    const result = await (await mcp()).auth(provider, { serverUrl: server.url, fetchFn: env.fetch, ...(hint.resourceMetadataUrl ? { resourceMetadataUrl: hint.resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) });
    if (result !== 'REDIRECT' || !captured.url || !captured.verifier || !captured.discovery || !client) throw new Error('no authorization URL');
  } catch (err) {
    throw signInFailure(err, 'start', captured.discovery, client !== null);
  }
  if (client !== reusable) await env.grants.saveClient(server.id, client);
  const d = captured.discovery;
  const flow: Flow = {
    authorizationServerUrl: d.authorizationServerUrl, redirectUri: ends.redirectUri, clientId: client.info.client_id,
    ...(d.authorizationServerMetadata ? { metadata: d.authorizationServerMetadata } : {}),
    ...(d.resourceMetadata ? { resourceMetadata: d.resourceMetadata } : {}),
    ...(captured.resource ? { resource: captured.resource } : {}),
  };
  const expiresAt = Date.now() + env.ttlMs;
  await env.pending.add(state, { workspaceId: server.workspaceId, serverId: server.id, personId: who.personId, verifier: captured.verifier, flow, browser: who.browser, expiresAt });
  return { url: captured.url.toString(), expiresAt, stateHash: sha256(state) };
}

