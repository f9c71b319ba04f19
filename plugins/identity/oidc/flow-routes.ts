import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { GatewayError, type CachePort, type RouteContext } from '../../../kernel/index.js';
import type { Deps } from '../deps.js';
import { insertSession } from '../db-persons.js';
import { newSecret, sessionPrefix, sha256 } from '../secrets.js';
import { sessionCookieHeader } from '../routes/sessions.js';
import { Empty } from '../views.js';
import type { OidcClients, PendingSignIn } from './client.js';
import { issuerById } from './issuers.js';
import { decide, refusalText, type Refusal } from './policy.js';

declare module '../../../kernel/index.js' {
  interface LogEvents {
    'identity.oidc_sign_in_failed': { issuer_id: string | null; reason: Refusal | 'failed' | 'expired'; person_id: string | null; error: string | null };
  }
}

const tag = 'identity';
export const callbackPath = '/oidc/callback';
const bindingCookie = 'svc_oidc';
const pendingMs = 10 * 60_000;
const pendingKey = (state: string) => `oidc:pending:${sha256(state)}`;

/** svc's own address as the browser reaches it: `publicUrl` when set, else the request's host (and HTTPS as the kernel judged it). */
function baseUrl(publicUrl: string, rc: RouteContext): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const host = rc.req.headers.host ?? '';
  if (!/^[A-Za-z0-9.:[\]-]{1,300}$/.test(host)) throw new GatewayError('invalid_request', 'svc cannot tell its own address from this request: set plugins.identity.config.publicUrl.');
  return `${rc.secure ? 'https' : 'http'}://${host}`;
}

export const redirectUriOf = (publicUrl: string, rc: RouteContext): string => `${baseUrl(publicUrl, rc)}/admin/v1${callbackPath}`;

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** The page a refused sign-in lands on: no scripts, nothing to frame, a way back. */
function refusalPage(res: ServerResponse, status: number, text: string, clearBinding: string): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head><body><main><h1>Sign-in refused</h1><p>${text}</p><p><a href="/">Back to sign-in</a></p></main></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', 'set-cookie': clearBinding,
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'", 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

/** Starting a single sign-on and its return: authorization code flow with PKCE, state and nonce. */
export function oidcFlowRoutes(d: Deps, clients: OidcClients, cache: CachePort): void {
  const { admin, store, sync, config, log } = d;
  const binding = (value: string, maxAge: number, secure: boolean) =>
    `${bindingCookie}=${value}; Path=/admin/v1${callbackPath}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;

  admin.route({
    method: 'GET',
    path: '/oidc/issuers/:issuerId/start',
    summary: 'Start signing in with an identity provider: redirects the browser to it (the sign-in page links here)',
    tag,
    access: 'public',
    audit: false,
    response: Empty,
    handler: async ({ params, rc }) => {
      const issuer = await issuerById(store, params.issuerId ?? '');
      if (!issuer || !issuer.enabled) throw new GatewayError('not_found', 'No such identity provider, or it is turned off.', { param: 'issuerId' });
      // Binds the sign-in to this browser: a callback carrying someone else's state is refused.
      const secret = randomBytes(32).toString('base64url');
      const { url, pending } = await clients.start(issuer, redirectUriOf(config.publicUrl, rc), sha256(secret));
      await cache.set(pendingKey(pending.state), JSON.stringify(pending), pendingMs);
      rc.res.writeHead(302, { location: url.href, 'set-cookie': binding(secret, pendingMs / 1000, config.secureCookie || rc.secure), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      rc.res.end();
      return null;
    },
  });

  admin.route({
    method: 'GET',
    path: callbackPath,
    summary: 'Where the identity provider returns the browser: checks state, PKCE, the ID token and nonce, then signs the person in',
    tag,
    access: 'public',
    audit: { action: 'session.sign_in_oidc', attempts: true },
    response: Empty,
    handler: async ({ rc, note }) => {
      const secure = config.secureCookie || rc.secure;
      const clear = binding('', 0, secure);
      const refuse = (status: number, reason: Refusal | 'failed' | 'expired', issuerId: string | null, personId: string | null, error: string | null = null) => {
        log.info('identity.oidc_sign_in_failed', { issuer_id: issuerId, reason, person_id: personId, error });
        note({ actor_id: personId, resource_id: issuerId, error_code: reason === 'suspended' || reason === 'unknown_person' || reason === 'domain_not_allowed' ? 'forbidden' : 'invalid_request' });
        refusalPage(rc.res, status, refusalText[reason], clear);
        return null;
      };
      const state = rc.query.get('state') ?? '';
      const stored = state ? await cache.get(pendingKey(state)) : null;
      if (!stored) return refuse(400, 'expired', null, null);
      await cache.del(pendingKey(state));
      const pending = JSON.parse(stored) as PendingSignIn;
      const cookie = readCookie(rc.req.headers.cookie, bindingCookie);
      if (!cookie || sha256(cookie) !== pending.bindingHash) return refuse(400, 'expired', pending.issuerId, null, 'binding');
      const issuer = await issuerById(store, pending.issuerId);
      if (!issuer || !issuer.enabled) return refuse(400, 'expired', pending.issuerId, null, 'issuer_gone');
      let claims;
      try {
        const url = new URL(pending.redirectUri);
        url.search = new URL(rc.req.url ?? '/', 'http://local').search;
        claims = await clients.finish(issuer, pending, url);
      } catch (err) {
        // openid-client's codes (OAUTH_JWT_CLAIM_COMPARISON_FAILED for a nonce, …); never the token.
        return refuse(400, 'failed', issuer.id, null, String((err as { code?: string }).code ?? (err as Error).name ?? 'error').slice(0, 80));
      }
      const decision = await decide(store, issuer, claims);
      if ('refused' in decision) return refuse(403, decision.refused, issuer.id, decision.personId);
      const token = newSecret(sessionPrefix);
      await insertSession(store, decision.person.id, token, config.sessionTtlSeconds * 1000);
      await sync.changed();
      note({ actor_id: decision.person.id, resource_id: issuer.id });
      rc.res.writeHead(302, {
        location: '/',
        'set-cookie': [sessionCookieHeader(token, config.sessionTtlSeconds, secure), clear],
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      rc.res.end();
      return null;
    },
  });
}
