import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { GatewayError, isGatewayError } from '../../../kernel/index.js';
import { loadedMcp, ToolServerFailure } from '../mcp.js';
import { OriginNotAllowed } from './http.js';

/** An OAuth error code as the authorization server sent it, only when it looks like one (never free text). */
export const oauthCode = (code: unknown): string => (typeof code === 'string' && /^[a-z_]{1,60}$/.test(code) ? code : 'error');

/** Why an OAuth step failed, as a short kind for logs and messages; never a server's text. */
export function failureKind(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause instanceof ToolServerFailure || cause instanceof OriginNotAllowed) return failureKind(cause);
  if (err instanceof OriginNotAllowed) return 'origin_not_allowed';
  if (err instanceof ToolServerFailure) return err.kind;
  const m = loadedMcp();
  if (m && (err instanceof m.IssuerMismatchError || err instanceof m.AuthorizationServerMismatchError)) return 'issuer_mismatch';
  if (m && err instanceof m.RegistrationRejectedError) return 'registration_refused';
  if (m && err instanceof m.InsecureTokenEndpointError) return 'insecure_token_endpoint';
  if (m && err instanceof m.OAuthError) return `oauth_${oauthCode(err.code)}`;
  if ((err as Error | null)?.name === 'TimeoutError') return 'timeout';
  if (err instanceof TypeError && err.message.includes('fetch failed')) return 'unreachable';
  return 'protocol';
}

const reach = new Set(['timeout', 'unreachable', 'redirect', 'too_large']);

/**
 * The admin's answer when a sign-in could not start or finish: what went wrong and what to do,
 * from the failure's kind only (texts from the tool or authorization server are never shown:
 * RFC 9207 warns they may come from an attacker).
 */
export function signInFailure(err: unknown, step: 'start' | 'callback', discovery?: OAuthDiscoveryState, hadClient = true): GatewayError {
  if (isGatewayError(err)) return err as GatewayError;
  const kind = failureKind(err);
  const details = { reason: kind };
  const bad = (message: string, param: string | null = null) => new GatewayError('invalid_request', message, { param, details });
  const upstream = (message: string) => new GatewayError('upstream_unavailable', message, { details });
  if (err instanceof OriginNotAllowed) {
    return bad(`svc may not contact ${err.origin}: an instance admin must allow that origin (POST /admin/v1/tool-origins) before this server can be signed in to.`);
  }
  const metadata = discovery?.authorizationServerMetadata;
  if (step === 'start' && !hadClient && metadata && !metadata.registration_endpoint) {
    return new GatewayError('invalid_request', 'The authorization server offers no client registration svc can use: register the server again with oauth_client_id (and oauth_client_secret) issued by that authorization server, or, if it reads client metadata documents, give svc an https publicUrl.', { param: 'oauth_client_id', details: { reason: 'no_client_registration' } });
  }
  if (kind === 'registration_refused') return upstream('The authorization server refused svc\'s client registration: register the server again with oauth_client_id issued by that authorization server.');
  if (kind === 'issuer_mismatch') return upstream('The authorization server\'s issuer does not match what it announced: the sign-in was stopped.');
  if (kind === 'insecure_token_endpoint') return bad('The authorization server\'s token endpoint is not https: svc sends no credentials there.');
  if (reach.has(kind)) return upstream(`The tool server or its authorization server could not be reached (${kind}).`);
  if (kind.startsWith('oauth_')) return upstream(`The authorization server refused the sign-in (${kind.slice(6)}).`);
  return upstream(step === 'start'
    ? 'The tool server\'s OAuth metadata is missing or not usable: the sign-in could not start.'
    : 'The authorization server\'s answer could not be used: the sign-in did not finish.');
}
