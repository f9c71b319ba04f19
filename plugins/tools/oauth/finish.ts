import { mcp } from '../mcp.js';
import type { OAuthTokens } from '@modelcontextprotocol/client';
import { GatewayError } from '../../../kernel/index.js';
import type { ToolCatalog, ToolServer } from '../catalog.js';
import { failureKind, oauthCode, signInFailure } from './failures.js';
import type { Tokens } from './grants.js';
import { sha256 } from './pending.js';
import type { SignInEnv } from './start.js';

/** What the authorization server put on the redirect back to svc (RFC 6749 §4.1.2, RFC 9207). */
export interface CallbackQuery {
  state?: string;
  code?: string;
  iss?: string;
  error?: string;
}

/** Tokens as svc keeps them: an absolute expiry instead of a lifetime. */
export function keptTokens(t: OAuthTokens, refreshToken?: string): Tokens {
  const refresh = t.refresh_token ?? refreshToken;
  return {
    accessToken: t.access_token, obtainedAt: Date.now(),
    ...(refresh ? { refreshToken: refresh } : {}),
    ...(t.expires_in !== undefined ? { expiresAt: Date.now() + t.expires_in * 1000 } : {}),
    ...(t.scope ? { scope: t.scope } : {}),
  };
}

const bad = (message: string, param = 'state') => new GatewayError('invalid_request', message, { param });

/**
 * The callback leg: the unfinished sign-in named by `state` is consumed (once, on any replica),
 * checked (not expired, same browser when it started in one, same client), and its code is
 * exchanged with the SDK's `exchangeAuthorization` (PKCE verifier, `resource`, RFC 9207 `iss`
 * checked against the issuer recorded at the start). The tokens are stored encrypted on the
 * server's row. Returns the server signed in to.
 */
export async function finishSignIn(env: SignInEnv & { catalog: ToolCatalog }, q: CallbackQuery, browserNonce: string | undefined): Promise<ToolServer> {
  if (!q.state) throw bad('The sign-in callback has no state: start the sign-in again.');
  const p = await env.pending.take(q.state);
  if (!p) throw bad('This sign-in is unknown or was already used: start it again from the tool server.');
  if (p.expiresAt <= Date.now()) throw bad('This sign-in has expired: start it again from the tool server.');
  if (p.browser !== null && (browserNonce === undefined || sha256(browserNonce) !== p.browser)) {
    throw bad('This sign-in was started in another browser: start it again in this one.');
  }
  if (q.error !== undefined) throw bad(`The authorization server did not grant access (${oauthCode(q.error)}).`, 'error');
  if (!q.code) throw bad('The sign-in callback has no code.', 'code');
  const server = await env.catalog.server(p.workspaceId, p.serverId);
  const grant = server && (await env.grants.get(server.id));
  if (!server || !grant) throw new GatewayError('not_found', 'The tool server of this sign-in was removed.');
  if (grant.client?.info.client_id !== p.flow.clientId) throw bad('The tool server\'s client registration changed since this sign-in started: start it again.');
  let tokens: OAuthTokens;
  try {
    tokens = await (await mcp()).exchangeAuthorization(p.flow.authorizationServerUrl, {
      clientInformation: grant.client.info, authorizationCode: q.code, codeVerifier: p.verifier, redirectUri: p.flow.redirectUri, fetchFn: env.fetch,
      ...(p.flow.metadata ? { metadata: p.flow.metadata } : {}), ...(q.iss !== undefined ? { iss: q.iss } : {}), ...(p.flow.resource ? { resource: p.flow.resource } : {}),
    });
  } catch (err) {
    // A registration the authorization server no longer knows is dropped: the next start registers again.
    if (failureKind(err) === 'oauth_invalid_client' && !grant.client.entered) await env.grants.saveClient(server.id, null);
    throw signInFailure(err, 'callback');
  }
  if (tokens.token_type.toLowerCase() !== 'bearer') throw new GatewayError('upstream_unavailable', 'The authorization server issued a token type svc does not use (only bearer tokens).');
  await env.grants.saveTokens(server.id, p.flow, keptTokens(tokens));
  return server;
}
