import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import { LocalHttpServer } from './mcp-server-base.js';

interface Client { secret?: string; redirectUris: string[] }
interface Code { clientId: string; redirectUri: string; challenge: string; resource: string; scope: string }
interface Grant { clientId: string; resource: string; scope: string; revoked: boolean; exp?: number }

export interface AuthServerOptions {
  /** Offers dynamic client registration (RFC 7591). Default true. */
  registration?: boolean;
  /** Advertises Client ID Metadata Documents and accepts https client ids by fetching them. */
  clientDocuments?: boolean;
  /** Where an https client id document is really fetched from (the test's TLS-terminating proxy). */
  rewrite?: (url: string) => string;
}

const b64url = (buf: Buffer) => buf.toString('base64url');
const token = (prefix: string) => `${prefix}-${b64url(randomBytes(18))}`;

/**
 * A small but real OAuth 2.1 authorization server for tests: RFC 8414 metadata, dynamic client
 * registration, an authorize endpoint that approves at once as a test user, a token endpoint
 * with client authentication, PKCE S256, the RFC 8707 audience (`resource`) check, refresh with
 * rotation, and RFC 9207 `iss` on the redirect. The MCP test server asks it whether an access
 * token is valid (`verifyAccessToken`).
 */
export class TestAuthServer extends LocalHttpServer {
  readonly user = 'oauth-test-user';
  /** The only resource it issues tokens for (the MCP server's URL). */
  resource = '';
  /** Lifetime of access tokens it issues from now on. */
  accessTtlSec = 3600;
  /** A mix-up to play: metadata naming another issuer, or another `iss` on the redirect back (RFC 9207). */
  misbehave: 'none' | 'metadata-issuer' | 'response-issuer' = 'none';
  readonly clients = new Map<string, Client>();
  private readonly codes = new Map<string, Code>();
  private readonly accessTokens = new Map<string, Grant>();
  private readonly refreshTokens = new Map<string, Grant>();
  /** Every token and code it handed out, for canary checks. */
  readonly issued: string[] = [];
  readonly registrations: unknown[] = [];
  readonly authorizeQueries: URLSearchParams[] = [];
  readonly tokenRequests: Array<{ grant: string; resource: string | null }> = [];

  constructor(private readonly options: AuthServerOptions = {}) {
    super();
  }

  get issuer(): string {
    return this.origin;
  }

  addClient(id: string, secret: string | undefined, redirectUris: string[] = []): void {
    this.clients.set(id, { ...(secret ? { secret } : {}), redirectUris });
  }

  metadata(): Record<string, unknown> {
    return {
      issuer: this.misbehave === 'metadata-issuer' ? 'https://impostor.example' : this.issuer, authorization_endpoint: `${this.origin}/authorize`, token_endpoint: `${this.origin}/token`,
      ...(this.options.registration === false ? {} : { registration_endpoint: `${this.origin}/register` }),
      response_types_supported: ['code'], grant_types_supported: ['authorization_code', 'refresh_token'], code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'], scopes_supported: ['tools', 'offline_access'],
      authorization_response_iss_parameter_supported: true, ...(this.options.clientDocuments ? { client_id_metadata_document_supported: true } : {}),
    };
  }

  /** What the MCP server asks: the token's audience, expiry and user, or OAuth `invalid_token`. */
  async verifyAccessToken(t: string): Promise<AuthInfo> {
    const g = this.accessTokens.get(t);
    if (!g || g.revoked || (g.exp ?? 0) <= Date.now() / 1000) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown, revoked or expired token');
    return { token: t, clientId: g.clientId, scopes: g.scope.split(' ').filter(Boolean), expiresAt: g.exp!, resource: new URL(g.resource), extra: { user: this.user } };
  }

  /** The user withdrew svc's access: every token it holds stops working, refresh tokens included. */
  revokeAll(): void {
    for (const g of [...this.accessTokens.values(), ...this.refreshTokens.values()]) g.revoked = true;
  }

  /** Access tokens stop working (as if they ran out early); refresh tokens still work. */
  revokeAccessTokens(): void {
    for (const g of this.accessTokens.values()) g.revoked = true;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    try {
      if (url.pathname === '/.well-known/oauth-authorization-server' && req.method === 'GET') return json(200, this.metadata());
      if (url.pathname === '/register' && req.method === 'POST' && this.options.registration !== false) return json(201, this.register(JSON.parse(await body(req))));
      if (url.pathname === '/authorize' && req.method === 'GET') return await this.authorize(url.searchParams, res);
      if (url.pathname === '/token' && req.method === 'POST') {
        const r = this.token(new URLSearchParams(await body(req)), req.headers.authorization);
        return json(r.status, r.body);
      }
      json(404, { error: 'not_found' });
    } catch {
      if (!res.headersSent) json(500, { error: 'server_error' });
    }
  }

  private register(meta: { redirect_uris?: string[]; token_endpoint_auth_method?: string }): Record<string, unknown> {
    this.registrations.push(meta);
    const id = token('client');
    const secret = meta.token_endpoint_auth_method === 'none' ? undefined : token('secret');
    this.addClient(id, secret, meta.redirect_uris ?? []);
    return { ...meta, client_id: id, ...(secret ? { client_secret: secret, token_endpoint_auth_method: 'client_secret_basic' } : {}), client_id_issued_at: Math.floor(Date.now() / 1000) };
  }

  private async client(id: string): Promise<Client | undefined> {
    if (this.clients.has(id) || !this.options.clientDocuments || !id.startsWith('https://')) return this.clients.get(id);
    const doc = (await (await fetch(this.options.rewrite?.(id) ?? id)).json()) as { client_id: string; redirect_uris: string[] };
    return doc.client_id === id ? { redirectUris: doc.redirect_uris } : undefined;
  }

  private async authorize(q: URLSearchParams, res: ServerResponse): Promise<void> {
    this.authorizeQueries.push(q);
    const client = await this.client(q.get('client_id') ?? '');
    const redirect = q.get('redirect_uri') ?? '';
    // An unknown client or redirect URI is never redirected to (RFC 6749 §4.1.2.1).
    if (!client || !client.redirectUris.includes(redirect)) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('bad client or redirect_uri');
    const back = new URL(redirect);
    back.searchParams.set('iss', this.misbehave === 'response-issuer' ? 'https://impostor.example' : this.issuer);
    if (q.get('state')) back.searchParams.set('state', q.get('state')!);
    const refuse = (error: string): void => void res.writeHead(302, { location: (back.searchParams.set('error', error), back.toString()) }).end();
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return refuse('invalid_request');
    if (q.get('resource') !== this.resource) return refuse('invalid_target');
    const code = token('code');
    this.issued.push(code);
    this.codes.set(code, { clientId: q.get('client_id')!, redirectUri: redirect, challenge: q.get('code_challenge')!, resource: this.resource, scope: q.get('scope') ?? '' });
    back.searchParams.set('code', code);
    res.writeHead(302, { location: back.toString() }).end();
  }

  private token(p: URLSearchParams, authorization: string | undefined): { status: number; body: Record<string, unknown> } {
    const grant = p.get('grant_type') ?? '';
    this.tokenRequests.push({ grant, resource: p.get('resource') });
    const fail = (error: string, status = 400) => ({ status, body: { error } });
    let clientId = p.get('client_id') ?? '';
    let secret = p.get('client_secret') ?? undefined;
    if (authorization?.startsWith('Basic ')) [clientId, secret] = Buffer.from(authorization.slice(6), 'base64').toString().split(/:(.*)/s) as [string, string];
    const client = this.clients.get(clientId) ?? (clientId.startsWith('https://') && this.options.clientDocuments ? {} as Client : undefined);
    if (!client || client.secret !== secret) return fail('invalid_client', 401);
    if (grant === 'authorization_code') {
      const c = this.codes.get(p.get('code') ?? '');
      this.codes.delete(p.get('code') ?? '');
      const verifier = p.get('code_verifier') ?? '';
      if (!c || c.clientId !== clientId || c.redirectUri !== p.get('redirect_uri')) return fail('invalid_grant');
      if (b64url(createHash('sha256').update(verifier).digest()) !== c.challenge) return fail('invalid_grant');
      if ((p.get('resource') ?? c.resource) !== c.resource) return fail('invalid_target');
      return { status: 200, body: this.tokens(clientId, c.resource, c.scope) };
    }
    if (grant === 'refresh_token') {
      const g = this.refreshTokens.get(p.get('refresh_token') ?? '');
      if (!g || g.revoked || g.clientId !== clientId) return fail('invalid_grant');
      if ((p.get('resource') ?? g.resource) !== g.resource) return fail('invalid_target');
      g.revoked = true; // rotation: a refresh token works once
      return { status: 200, body: this.tokens(clientId, g.resource, g.scope) };
    }
    return fail('unsupported_grant_type');
  }

  private tokens(clientId: string, resource: string, scope: string): Record<string, unknown> {
    const access = token('at');
    const refresh = token('rt');
    this.issued.push(access, refresh);
    this.accessTokens.set(access, { clientId, resource, scope, revoked: false, exp: Math.floor(Date.now() / 1000) + this.accessTtlSec });
    this.refreshTokens.set(refresh, { clientId, resource, scope, revoked: false });
    return { access_token: access, token_type: 'Bearer', expires_in: this.accessTtlSec, refresh_token: refresh, scope };
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
