import { randomBytes } from 'node:crypto';
import { GatewayError, isGatewayError, Type, type AdminApi, type Logger } from '../../../kernel/index.js';
import type { ToolCatalog, ToolServer } from '../catalog.js';
import { bindingCookie, callbackPath, clientDocumentPath, clientEndpoints, cookie, setBindingCookie, signedInPage } from './endpoints.js';
import { finishSignIn } from './finish.js';
import { sha256 } from './pending.js';
import { clientMetadata, startSignIn, type SignInEnv } from './start.js';

declare module '../../../kernel/index.js' {
  interface LogEvents {
    'tools.sign_in_started': { server_id: string };
    'tools.signed_in': { server_id: string };
    'tools.signed_out': { server_id: string };
    /** A start or callback refused; `reason` is a kind (never a server's text). */
    'tools.sign_in_failed': { step: string; reason: string };
  }
}

const tag = 'tools';
const admins = { workspace: 'admin' as const, param: 'workspaceId' };

export interface SignInRouteEnv extends SignInEnv {
  catalog: ToolCatalog;
  publicUrl: string;
  log: Logger;
}

/**
 * The OAuth sign-in of tool servers: start (workspace admins), the callback the authorization
 * server sends the browser to (bound to the state, not to a session: the session cookie is
 * SameSite=Strict and does not come along), sign-out, and svc's Client ID Metadata Document.
 */
export function signInRoutes(admin: AdminApi, env: SignInRouteEnv): void {
  const oauthServer = async (workspaceId: string, id: string): Promise<ToolServer> => {
    const s = await env.catalog.server(workspaceId, id);
    if (!s) throw new GatewayError('not_found', 'No such tool server in this workspace.', { param: 'serverId' });
    if (!(await env.grants.get(s.id))) throw new GatewayError('invalid_request', 'This tool server does not use an OAuth sign-in (it was not registered with auth "oauth").', { param: 'serverId' });
    return s;
  };
  const failed = (step: string, err: unknown): never => {
    const reason = isGatewayError(err) ? String((err as GatewayError).details?.reason ?? err.code) : 'internal';
    env.log.warn('tools.sign_in_failed', { step, reason });
    throw err;
  };

  admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/tool-servers/:serverId/sign-in', tag, access: admins, status: 201,
    summary: 'Start the OAuth sign-in of a tool server: returns the authorization server address to send the browser to',
    response: Type.Object({
      authorization_url: Type.String({ description: 'Open this in the browser; the authorization server sends it back to svc' }),
      expires_at: Type.String({ description: 'The sign-in must be completed before this time' }),
    }),
    handler: async ({ params, caller, rc }) => {
      const s = await oauthServer(params.workspaceId!, params.serverId!);
      if (!(await env.catalog.originAllowed(s.url))) throw new GatewayError('invalid_request', 'The tool server\'s origin is not allowed on this instance: an instance admin must allow it first.', { param: 'serverId' });
      // Started from a browser session: the callback must come back to that same browser.
      const fromBrowser = caller?.via === 'session' && rc.req.headers.authorization === undefined && rc.req.headers.cookie !== undefined;
      const nonce = fromBrowser ? randomBytes(24).toString('base64url') : null;
      const ends = clientEndpoints(env.publicUrl, rc.req);
      const started = await startSignIn(env, s, { personId: caller!.personId, browser: nonce && sha256(nonce) }, ends).catch((err) => failed('start', err));
      if (nonce) setBindingCookie(rc.res, bindingCookie(started.stateHash), nonce, env.ttlMs, ends.redirectUri);
      env.log.info('tools.sign_in_started', { server_id: s.id });
      return { authorization_url: started.url, expires_at: new Date(started.expiresAt).toISOString() };
    },
  });

  admin.route({
    method: 'GET', path: callbackPath, tag, access: 'public',
    summary: 'Where the authorization server sends the browser back: finishes the sign-in (a page for browsers, JSON otherwise)',
    query: Type.Object({
      state: Type.Optional(Type.String({ maxLength: 200 })), code: Type.Optional(Type.String({ maxLength: 4000 })),
      iss: Type.Optional(Type.String({ maxLength: 2000 })), error: Type.Optional(Type.String({ maxLength: 200 })),
    }),
    response: Type.Object({ server_id: Type.String(), sign_in: Type.Literal('signed_in') }),
    handler: async ({ query, rc }) => {
      const name = query.state ? bindingCookie(sha256(query.state)) : '';
      const server = await finishSignIn(env, query, name ? cookie(rc.req, name) : undefined).catch((err) => failed('callback', err));
      env.log.info('tools.signed_in', { server_id: server.id });
      if (name && cookie(rc.req, name) !== undefined) setBindingCookie(rc.res, name, '', 0, clientEndpoints(env.publicUrl, rc.req).redirectUri);
      if (String(rc.req.headers.accept ?? '').includes('text/html')) signedInPage(rc.res, server.name);
      return { server_id: server.id, sign_in: 'signed_in' as const };
    },
  });

  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/tool-servers/:serverId/sign-in', tag, access: admins, status: 204,
    summary: 'Sign out of a tool server: forgets its tokens, unfinished sign-ins and svc\'s own registration there',
    response: Type.Null(),
    handler: async ({ params }) => {
      const s = await oauthServer(params.workspaceId!, params.serverId!);
      await env.grants.signOut(s.id);
      await env.pending.removeFor(s.id);
      const grant = await env.grants.get(s.id);
      // A registration svc made may be what the authorization server no longer accepts: the next sign-in registers again.
      if (grant?.client && !grant.client.entered) await env.grants.saveClient(s.id, null);
      env.log.info('tools.signed_out', { server_id: s.id });
      return null;
    },
  });

  admin.route({
    method: 'GET', path: clientDocumentPath, tag, access: 'public',
    summary: 'svc\'s OAuth Client ID Metadata Document (published only with an https publicUrl)',
    response: Type.Object({
      client_id: Type.String(), client_name: Type.String(), redirect_uris: Type.Array(Type.String()), grant_types: Type.Array(Type.String()),
      response_types: Type.Array(Type.String()), token_endpoint_auth_method: Type.String(),
    }),
    handler: ({ rc }) => {
      const ends = clientEndpoints(env.publicUrl, rc.req);
      if (!ends.clientMetadataUrl) throw new GatewayError('not_found', 'svc publishes a client metadata document only when plugins.tools.config.publicUrl is an https address.');
      const doc = clientMetadata(ends.redirectUri, true);
      return { client_id: ends.clientMetadataUrl, client_name: doc.client_name!, redirect_uris: doc.redirect_uris.map(String), grant_types: doc.grant_types!, response_types: doc.response_types!, token_endpoint_auth_method: 'none' };
    },
  });
}
