import type * as Oidc from 'openid-client';

/** openid-client, loaded at the first single sign-on (~7 MB of RSS an instance without it never needs). */
let loaded: Promise<typeof Oidc> | undefined;
const openidClient = (): Promise<typeof Oidc> => (loaded ??= import('openid-client'));
import { GatewayError } from '../../../kernel/index.js';
import type { Issuer } from './issuers.js';

/** What svc keeps of a sign-in between sending the browser off and its return (in the cache, 10 minutes). */
export interface PendingSignIn {
  issuerId: string;
  verifier: string;
  nonce: string;
  state: string;
  redirectUri: string;
  /** SHA-256 of the value in the browser's binding cookie: the callback must come back to the same browser. */
  bindingHash: string;
}

/** The claims svc reads from the issuer. */
export interface SignedInClaims {
  subject: string;
  email: string | null;
  emailVerified: boolean | null;
  name: string | null;
  raw: Record<string, unknown>;
}

const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Discovery documents per issuer, fetched on first use and again after a change to the issuer or
 * an hour. Issuers must use https; plain http is allowed on loopback only (local development and
 * the tests' provider).
 */
export class OidcClients {
  private readonly cache = new Map<string, { at: number; updatedAt: number; config: Promise<Oidc.Configuration> }>();

  constructor(private readonly secretOf: (issuer: Issuer) => string | null) {}

  configuration(issuer: Issuer): Promise<Oidc.Configuration> {
    const hit = this.cache.get(issuer.id);
    if (hit && hit.updatedAt === issuer.updatedAt && Date.now() - hit.at < 3_600_000) return hit.config;
    const url = new URL(issuer.discoveryUrl);
    const insecure = url.protocol === 'http:' && loopback.has(url.hostname);
    if (url.protocol !== 'https:' && !insecure) throw new GatewayError('invalid_request', 'The issuer must use https.', { param: 'discovery_url' });
    const secret = this.secretOf(issuer) ?? undefined;
    const config = openidClient().then((oidc) => oidc.discovery(url, issuer.clientId, secret, undefined, { timeout: 10, ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}) }));
    this.cache.set(issuer.id, { at: Date.now(), updatedAt: issuer.updatedAt, config });
    config.catch(() => this.cache.delete(issuer.id));
    return config;
  }

  forget(issuerId: string): void {
    this.cache.delete(issuerId);
  }

  /** The authorization URL (code flow, PKCE S256, state, nonce) and what the callback will check. */
  async start(issuer: Issuer, redirectUri: string, bindingHash: string): Promise<{ url: URL; pending: PendingSignIn }> {
    const config = await this.configuration(issuer);
    const oidc = await openidClient();
    const verifier = oidc.randomPKCECodeVerifier();
    const pending: PendingSignIn = { issuerId: issuer.id, verifier, nonce: oidc.randomNonce(), state: oidc.randomState(), redirectUri, bindingHash };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url, pending };
  }

  /**
   * Exchanges the code: openid-client checks the state, the ID token's signature against the
   * issuer's keys, its issuer, audience, expiry and nonce. Claims come from the ID token; what it
   * lacks (many issuers put the e-mail in userinfo only) from the userinfo endpoint.
   */
  async finish(issuer: Issuer, pending: PendingSignIn, callbackUrl: URL): Promise<SignedInClaims> {
    const config = await this.configuration(issuer);
    const oidc = await openidClient();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    const idClaims = tokens.claims();
    if (!idClaims) throw new Error('no ID token');
    let raw: Record<string, unknown> = { ...idClaims };
    if (typeof raw.email !== 'string' || (issuer.adminClaim && !(issuer.adminClaim in raw))) {
      raw = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...raw };
    }
    return {
      subject: idClaims.sub,
      email: typeof raw.email === 'string' ? raw.email.trim().toLowerCase() : null,
      emailVerified: typeof raw.email_verified === 'boolean' ? raw.email_verified : null,
      name: typeof raw.name === 'string' ? raw.name.slice(0, 200) : null,
      raw,
    };
  }
}

/** True when the claim holds the value (equal, or one element of a list such as `groups`). */
export function claimHolds(raw: Record<string, unknown>, claim: string, value: string): boolean {
  const v = raw[claim];
  if (Array.isArray(v)) return v.map(String).includes(value);
  return v !== undefined && v !== null && String(v) === value;
}
