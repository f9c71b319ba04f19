import { GatewayError, Type, type AdminApi, type SandboxClient } from '../../kernel/index.js';
import { originOf, type ToolCatalog, type ToolServer, type WorkspaceTool } from './catalog.js';
import { ToolServerFailure } from './mcp.js';
import { functionName } from './names.js';
import { oauthSettings, type OAuthSignIn, type SignInState } from './oauth/index.js';
import type { CallRecords } from './records.js';
import { launchOf, stdioFields } from './stdio-launch.js';

const tag = 'tools';
const admins = { workspace: 'admin' as const, param: 'workspaceId' };

const ServerView = Type.Object({
  id: Type.String(), name: Type.String(), url: Type.Union([Type.String(), Type.Null()], { description: 'null for a stdio server' }), transport: Type.String(),
  has_credentials: Type.Boolean({ description: 'A bearer token (or, for stdio, secret env values) is stored encrypted; never shown' }),
  origin_allowed: Type.Boolean({ description: "The URL's origin is on the instance's allow-list (else svc never contacts the server); always true for stdio, whose reach the egress allow-list decides" }),
  created_at: Type.String(),
  auth: Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('oauth')]),
  sign_in: Type.Union([Type.Literal('signed_in'), Type.Literal('not_signed_in'), Type.Literal('expired'), Type.Null()], { description: 'OAuth servers: whether svc holds a working sign-in (never the tokens)' }),
  command: Type.Optional(Type.String()), args: Type.Optional(Type.Array(Type.String())), env: Type.Optional(Type.Record(Type.String(), Type.String())),
  secret_env: Type.Optional(Type.Array(Type.String(), { description: 'Names of the secret env values (never the values)' })),
});
const ToolView = Type.Object({
  name: Type.String({ description: 'The MCP tool name' }), function_name: Type.String({ description: 'The name the model sees' }),
  description: Type.String(), enabled: Type.Boolean(), needs_approval: Type.Boolean(), read_only: Type.Boolean({ description: 'Declared read-only by the server (a hint)' }),
});
const CallView = Type.Object({
  id: Type.String(), request_id: Type.String(), server_id: Type.String(), tool: Type.String(), arguments_bytes: Type.Integer(), arguments_sha256: Type.String(),
  outcome: Type.String({ description: 'What happened in this request: ok, error, denied, pending (stopped for approval) or refused (this request answered x-svc-deny)' }),
  duration_ms: Type.Integer(), approval_id: Type.Union([Type.String(), Type.Null()]),
  answer: Type.Union([Type.Literal('approved'), Type.Literal('refused'), Type.Null()], { description: 'A pending call: how its approval was answered (null while it waits)' }),
  answer_request_id: Type.Union([Type.String(), Type.Null()], { description: 'A pending call: the request that answered its approval' }),
  created_at: Type.String(),
});

const serverView = (s: ToolServer, allowed: string[], signIn?: SignInState) => ({
  id: s.id, name: s.name, url: s.launch ? null : s.url, transport: s.transport, has_credentials: s.hasCredentials,
  origin_allowed: s.launch ? true : allowed.includes(originOf(s.url)), created_at: new Date(s.createdAt).toISOString(),
  auth: signIn ? ('oauth' as const) : s.hasCredentials && !s.launch ? ('bearer' as const) : ('none' as const), sign_in: signIn ?? null,
  ...(s.launch ? { command: s.launch.command, args: s.launch.args, env: s.launch.env, secret_env: s.launch.secretEnvNames } : {}),
});
const toolView = (t: WorkspaceTool) => ({
  name: t.name, function_name: functionName(t.server.name, t.name, new Set()), description: t.description, enabled: t.enabled, needs_approval: t.needsApproval, read_only: t.readOnly,
});

function httpUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString();
  } catch {
    // answered below
  }
  throw new GatewayError('invalid_request', 'url must be an http or https address.', { param: 'url' });
}

/** A remote registration: an http(s) address and none of the stdio fields. */
function remoteUrl(body: { url?: string; command?: string; args?: unknown; env?: unknown; secret_env?: unknown }): string {
  const stray = (['command', 'args', 'env', 'secret_env'] as const).find((f) => body[f] !== undefined);
  if (stray) throw new GatewayError('invalid_request', `${stray} is for stdio tool servers.`, { param: stray });
  return httpUrl(body.url ?? '');
}

/** A stdio registration: no address or bearer token, and a sandbox to run it in. */
function stdioLaunch(body: Parameters<typeof launchOf>[0] & { url?: string; bearer_token?: string }, sandbox: () => SandboxClient | undefined) {
  if (body.url !== undefined) throw new GatewayError('invalid_request', 'A stdio tool server has no url: svc starts it in the sandbox.', { param: 'url' });
  if (body.bearer_token !== undefined) throw new GatewayError('invalid_request', 'A stdio tool server takes secret_env values, not a bearer token.', { param: 'bearer_token' });
  if (!sandbox()?.configured) throw new GatewayError('invalid_request', 'Command-line tool servers need the sandbox service, which this instance does not have (SVC_SANDBOX_URL).', { param: 'transport' });
  return launchOf(body);
}

/** Workspace tool servers (workspace admins), the origin allow-list (instance admins), tool call records. */
export function toolRoutes(admin: AdminApi, catalog: ToolCatalog, records: CallRecords, sandbox: () => SandboxClient | undefined, oauth: OAuthSignIn): void {
  const serverOf = async (workspaceId: string, id: string): Promise<ToolServer> => {
    const s = await catalog.server(workspaceId, id);
    if (!s) throw new GatewayError('not_found', 'No such tool server in this workspace.', { param: 'serverId' });
    return s;
  };
  admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/tool-servers', summary: 'Register an MCP tool server', tag, access: admins, status: 201,
    body: Type.Object({
      name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,40}$' }),
      url: Type.Optional(Type.String({ maxLength: 2000, description: 'Remote servers only' })),
      transport: Type.Optional(Type.Union([Type.Literal('streamable-http'), Type.Literal('sse'), Type.Literal('stdio')])),
      bearer_token: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
      ...stdioFields,
      // OAuth sign-in (plugins/tools/oauth): the admin signs in through POST …/sign-in after registering.
      auth: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('bearer'), Type.Literal('oauth')], { description: 'Default: bearer with a bearer_token, else none' })),
      oauth_client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'A client id issued by the authorization server (else svc registers itself)' })),
      oauth_client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Stored encrypted; never shown' })),
      oauth_scope: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Scope to ask for (else what the server asks for)' })),
    }),
    response: ServerView,
    handler: async ({ params, body }) => {
      const base = { workspaceId: params.workspaceId!, name: body.name };
      const transport = body.transport ?? 'streamable-http';
      if (transport === 'stdio' && body.auth !== undefined && body.auth !== 'none') {
        throw new GatewayError('invalid_request', 'A stdio tool server signs in to nothing: give it secret_env values instead.', { param: 'auth' });
      }
      const signIn = transport === 'stdio' ? null : oauthSettings(body);
      const server = transport === 'stdio' ? { ...base, transport, launch: stdioLaunch(body, sandbox) } : { ...base, transport, url: remoteUrl(body), bearer: body.bearer_token ?? null };
      if ((await catalog.servers(params.workspaceId!)).some((s) => s.name === body.name)) throw new GatewayError('invalid_request', 'A tool server with this name exists in the workspace.', { param: 'name' });
      const added = await catalog.addServer(server);
      if (signIn) await oauth.attach(added, signIn);
      return serverView(added, await catalog.origins(), signIn ? 'not_signed_in' : undefined);
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/tool-servers', summary: 'List the workspace tool servers', tag, access: admins,
    response: Type.Object({ data: Type.Array(ServerView) }),
    handler: async ({ params }) => {
      const allowed = await catalog.origins();
      const signIns = await oauth.grants.states(params.workspaceId!);
      return { data: (await catalog.servers(params.workspaceId!)).map((s) => serverView(s, allowed, signIns.get(s.id))) };
    },
  });
  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/tool-servers/:serverId', summary: 'Remove a tool server', tag, access: admins, status: 204,
    response: Type.Null(),
    handler: async ({ params }) => {
      const s = await serverOf(params.workspaceId!, params.serverId!);
      await catalog.removeServer(s.id);
      await oauth.forget(s.id);
      return null;
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/tool-servers/:serverId/tools', summary: "A server's tools and their settings (refresh=true lists them again)", tag, access: admins,
    query: Type.Object({ refresh: Type.Optional(Type.Boolean()) }),
    response: Type.Object({ data: Type.Array(ToolView) }),
    handler: async ({ params, query, rc }) => {
      const s = await serverOf(params.workspaceId!, params.serverId!);
      try {
        return { data: (await catalog.tools(s, rc.signal, query.refresh === true)).map(toolView) };
      } catch (err) {
        if (err instanceof ToolServerFailure && err.kind === 'sign_in') throw new GatewayError('invalid_request', 'Sign in to this tool server first (POST …/sign-in).', { param: 'serverId' });
        if (err instanceof ToolServerFailure) throw new GatewayError('upstream_unavailable', `The tool server could not be listed (${err.kind}).`);
        throw err;
      }
    },
  });
  admin.route({
    method: 'PATCH', path: '/workspaces/:workspaceId/tool-servers/:serverId/tools/:tool', summary: 'Enable or disable a tool; whether it needs approval', tag, access: admins,
    body: Type.Object({ enabled: Type.Optional(Type.Boolean()), needs_approval: Type.Optional(Type.Boolean()) }),
    response: Type.Object({ name: Type.String(), enabled: Type.Boolean(), needs_approval: Type.Boolean() }),
    handler: async ({ params, body }) => {
      const s = await serverOf(params.workspaceId!, params.serverId!);
      if (!(await catalog.setTool(s.id, params.tool!, body))) throw new GatewayError('not_found', 'No such tool on this server (list its tools first).', { param: 'tool' });
      const t = (await catalog.knownSettings(s.id)).find((x) => x.tool === params.tool)!;
      return { name: t.tool, enabled: t.enabled, needs_approval: t.needsApproval };
    },
  });
  admin.route({
    method: 'GET', path: '/tool-origins', summary: 'Tool-server origins allowed on this instance', tag, access: 'instance-admin',
    response: Type.Object({ data: Type.Array(Type.String()) }),
    handler: async () => ({ data: await catalog.origins() }),
  });
  admin.route({
    method: 'POST', path: '/tool-origins', summary: 'Allow a tool-server origin (scheme, host and port)', tag, access: 'instance-admin', status: 201,
    body: Type.Object({ origin: Type.String({ maxLength: 400 }) }),
    response: Type.Object({ origin: Type.String() }),
    handler: async ({ body }) => {
      const origin = originOf(httpUrl(body.origin));
      await catalog.allowOrigin(origin);
      return { origin };
    },
  });
  admin.route({
    method: 'DELETE', path: '/tool-origins', summary: 'Stop allowing a tool-server origin', tag, access: 'instance-admin', status: 204,
    query: Type.Object({ origin: Type.String({ maxLength: 400 }) }),
    response: Type.Null(),
    handler: async ({ query }) => {
      if (!(await catalog.removeOrigin(originOf(httpUrl(query.origin))))) throw new GatewayError('not_found', 'This origin is not allowed.', { param: 'origin' });
      return null;
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/tool-calls', summary: "Tool call records (never the arguments): the latest first, or one request's in order; paged by cursor", tag, access: admins,
    query: Type.Object({
      request_id: Type.Optional(Type.String({ maxLength: 60 })),
      cursor: Type.Optional(Type.String({ pattern: '^[0-9]+_[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    }),
    response: Type.Object({ data: Type.Array(CallView), next_cursor: Type.Union([Type.String(), Type.Null()]) }),
    handler: async ({ params, query }) =>
      records.list(params.workspaceId!, { ...(query.request_id ? { requestId: query.request_id } : {}), ...(query.cursor ? { cursor: query.cursor } : {}), limit: query.limit ?? 100 }),
  });
}
