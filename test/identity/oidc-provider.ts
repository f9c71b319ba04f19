import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

/** A person the provider knows: the login typed on its (development) sign-in form is the subject. */
export interface TestAccount {
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export const clientId = 'svc-test-client';
/** Also a canary: it must never reach a log line, a response or an audit entry. */
export const clientSecret = 'canary-oidc-client-secret-51c7';

/**
 * A real OpenID provider (`oidc-provider`, the certified implementation) on 127.0.0.1: discovery,
 * authorization with its development sign-in and consent forms, token endpoint, JWKS with freshly
 * generated signing keys, userinfo. PKCE is required; the ID token carries the scopes' claims.
 */
export class TestOpenIdProvider {
  private server?: Server;
  issuer = '';
  readonly accounts = new Map<string, TestAccount>();

  async start(redirectUri: string): Promise<this> {
    this.server = createServer();
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    const { port } = this.server.address() as { port: number };
    this.issuer = `http://127.0.0.1:${port}`;
    const provider = new Provider(this.issuer, {
      clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
      findAccount: async (_ctx, sub) => {
        const account = this.accounts.get(sub);
        if (!account) return undefined;
        return { accountId: sub, claims: async () => ({ sub, ...account }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      cookies: { keys: ['test-only-cookie-key'] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
      features: { devInteractions: { enabled: true } },
    });
    this.server.on('request', provider.callback());
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}
