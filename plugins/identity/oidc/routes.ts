import { GatewayError, Type, type CredentialVault, type Static } from '../../../kernel/index.js';
import type { Deps } from '../deps.js';
import { isUniqueViolation } from '../db-persons.js';
import { Empty, iso } from '../views.js';
import type { OidcClients } from './client.js';
import { redirectUriOf } from './flow-routes.js';
import { deleteIssuer, insertIssuer, issuerById, listIssuers, passwordSignInOn, setPasswordSignIn, updateIssuer, type Issuer } from './issuers.js';

const tag = 'identity';
const access = 'instance-admin' as const;
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Domain = Type.String({ pattern: '^[a-z0-9.-]+\\.[a-z]{2,}$', maxLength: 253, description: 'lower case, e.g. example.com' });

const IssuerView = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'Shown on the sign-in button: "Sign in with <name>"' }),
  discovery_url: Type.String(),
  client_id: Type.String(),
  has_client_secret: Type.Boolean({ description: 'Stored encrypted like provider keys; never shown' }),
  allowed_domains: Type.Array(Type.String(), { description: 'E-mail domains that may sign in; empty: any' }),
  admin_claim: Type.Union([Type.String(), Type.Null()], { description: 'Claim whose value makes the person an instance admin (kept in step at every sign-in)' }),
  admin_value: Type.Union([Type.String(), Type.Null()], { description: 'The value it must equal or, for a list such as groups, contain (default "true")' }),
  create_persons: Type.Boolean({ description: 'Unknown persons are created at their first sign-in; otherwise they must exist' }),
  enabled: Type.Boolean(),
  redirect_uri: Type.String({ description: 'Register this at the identity provider' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const Fields = {
  name: Text(100),
  discovery_url: Type.String({ pattern: '^https?://', maxLength: 2000, description: 'The issuer URL or its /.well-known/openid-configuration' }),
  client_id: Text(500),
  client_secret: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'Empty keeps the stored one; null removes it (public client)' }),
  allowed_domains: Type.Array(Domain, { maxItems: 100 }),
  admin_claim: Type.Union([Text(200), Type.Null()]),
  admin_value: Type.Union([Text(200), Type.Null()]),
  create_persons: Type.Boolean(),
  enabled: Type.Boolean(),
};
const UpdateBody = Type.Partial(Type.Object(Fields));
const CreateBody = Type.Composite([UpdateBody, Type.Object({ name: Fields.name, discovery_url: Fields.discovery_url, client_id: Fields.client_id })]);
type Body = Partial<Static<typeof UpdateBody>>;

const SignInOptions = Type.Object({
  password: Type.Boolean({ description: 'Password sign-in is on' }),
  issuers: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), start_url: Type.String() })),
});

/** Instance admins configure OpenID Connect issuers and whether password sign-in stays on. */
export function oidcAdminRoutes(d: Deps, clients: OidcClients, vault: () => CredentialVault | undefined): void {
  const { admin, store, config } = d;
  const context = (id: string) => `identity.oidc:${id}`;
  const encrypt = (id: string, plain: string) => {
    const v = vault();
    if (!v) throw new GatewayError('credential_key_unavailable', 'No credential vault: the catalog plugin must be on to store a client secret.');
    return v.encrypt(plain, context(id));
  };
  const view = (i: Issuer, redirectUri: string): Static<typeof IssuerView> => ({
    id: i.id, name: i.name, discovery_url: i.discoveryUrl, client_id: i.clientId, has_client_secret: i.clientSecret !== null, allowed_domains: i.allowedDomains,
    admin_claim: i.adminClaim, admin_value: i.adminValue, create_persons: i.createPersons, enabled: i.enabled, redirect_uri: redirectUri, created_at: iso(i.createdAt), updated_at: iso(i.updatedAt),
  });
  const taken = () => new GatewayError('invalid_request', 'An identity provider of that name exists.', { param: 'name' });
  /** Saves, then reads the discovery document, so a typo is refused at once rather than at the first sign-in. */
  const checkDiscovery = async (i: Issuer) => {
    clients.forget(i.id);
    try {
      await clients.configuration(i);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw new GatewayError('invalid_request', 'svc could not read the discovery document at that URL.', { param: 'discovery_url' });
    }
  };
  /** Password sign-in may be off only while some identity provider is on: nobody must be locked out. */
  const keepsAWayIn = async (without?: string) => {
    if (await passwordSignInOn(store)) return;
    if (!(await listIssuers(store)).some((i) => i.enabled && i.id !== without)) {
      throw new GatewayError('invalid_request', 'Password sign-in is off: keep at least one identity provider on, or turn password sign-in on first.', { param: 'enabled' });
    }
  };

  admin.route({
    method: 'GET', path: '/oidc/issuers', summary: 'OpenID Connect identity providers (single sign-on)', tag, access,
    response: Type.Object({ data: Type.Array(IssuerView) }),
    handler: async ({ rc }) => ({ data: (await listIssuers(store)).map((i) => view(i, redirectUriOf(config.publicUrl, rc))) }),
  });

  admin.route({
    method: 'POST', path: '/oidc/issuers', summary: 'Add an identity provider (saves, then reads its discovery document)', tag, access, status: 201,
    body: CreateBody, response: IssuerView,
    handler: async ({ body, rc }) => {
      const b = body as Body & { name: string; discovery_url: string; client_id: string };
      const issuer = await insertIssuer(
        store,
        { name: b.name.trim(), discoveryUrl: b.discovery_url, clientId: b.client_id, allowedDomains: b.allowed_domains ?? [], adminClaim: b.admin_claim ?? null, adminValue: b.admin_value ?? null, createPersons: b.create_persons ?? false, enabled: b.enabled ?? true },
        (id) => (b.client_secret ? encrypt(id, b.client_secret) : null),
      ).catch((err: unknown) => {
        throw isUniqueViolation(err) ? taken() : err;
      });
      await checkDiscovery(issuer).catch(async (err: unknown) => {
        await deleteIssuer(store, issuer.id);
        throw err;
      });
      return view(issuer, redirectUriOf(config.publicUrl, rc));
    },
  });

  admin.route({
    method: 'PATCH', path: '/oidc/issuers/:issuerId', summary: 'Change an identity provider (fields left out stay; an empty client_secret keeps the stored one)', tag, access,
    body: UpdateBody, response: IssuerView,
    handler: async ({ params, body, rc }) => {
      const b = body as Body;
      const old = await issuerById(store, params.issuerId ?? '');
      if (!old) throw new GatewayError('not_found', 'No such identity provider.', { param: 'issuerId' });
      if (b.enabled === false) await keepsAWayIn(old.id);
      const secret = b.client_secret === undefined || b.client_secret === '' ? old.clientSecret : b.client_secret === null ? null : encrypt(old.id, b.client_secret);
      const next: Issuer = {
        ...old, name: b.name?.trim() ?? old.name, discoveryUrl: b.discovery_url ?? old.discoveryUrl, clientId: b.client_id ?? old.clientId, clientSecret: secret,
        allowedDomains: b.allowed_domains ?? old.allowedDomains, adminClaim: b.admin_claim !== undefined ? b.admin_claim : old.adminClaim,
        adminValue: b.admin_value !== undefined ? b.admin_value : old.adminValue, createPersons: b.create_persons ?? old.createPersons, enabled: b.enabled ?? old.enabled, updatedAt: Date.now(),
      };
      await checkDiscovery(next);
      await updateIssuer(store, next).catch((err: unknown) => {
        throw isUniqueViolation(err) ? taken() : err;
      });
      return view(next, redirectUriOf(config.publicUrl, rc));
    },
  });

  admin.route({
    method: 'DELETE', path: '/oidc/issuers/:issuerId', summary: 'Remove an identity provider (its persons stay, and sign in another way)', tag, access, status: 204,
    response: Empty,
    handler: async ({ params }) => {
      const old = await issuerById(store, params.issuerId ?? '');
      if (!old) throw new GatewayError('not_found', 'No such identity provider.', { param: 'issuerId' });
      await keepsAWayIn(old.id);
      await deleteIssuer(store, old.id);
      clients.forget(old.id);
      return null;
    },
  });

  admin.route({
    method: 'GET', path: '/sign-in-options', summary: 'How persons may sign in: password and the identity providers that are on (for the sign-in page)', tag, access: 'public',
    response: SignInOptions,
    handler: async () => ({
      password: await passwordSignInOn(store),
      issuers: (await listIssuers(store)).filter((i) => i.enabled).map((i) => ({ id: i.id, name: i.name, start_url: `/admin/v1/oidc/issuers/${encodeURIComponent(i.id)}/start` })),
    }),
  });

  admin.route({
    method: 'PUT', path: '/sign-in-settings', summary: 'Turn password sign-in on or off (off needs an identity provider that is on)', tag, access,
    body: Type.Object({ password_sign_in: Type.Boolean() }), response: Type.Object({ password_sign_in: Type.Boolean() }),
    handler: async ({ body }) => {
      if (!body.password_sign_in && !(await listIssuers(store)).some((i) => i.enabled)) {
        throw new GatewayError('invalid_request', 'Add an identity provider and turn it on before turning password sign-in off.', { param: 'password_sign_in' });
      }
      await setPasswordSignIn(store, body.password_sign_in);
      return { password_sign_in: body.password_sign_in };
    },
  });
}
