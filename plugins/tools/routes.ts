import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import { originOf, type ToolCatalog, type ToolServer, type WorkspaceTool } from './catalog.js';
import { ToolServerFailure } from './mcp.js';
import { functionName } from './names.js';
import type { CallRecords } from './records.js';

const tag = 'tools';
const admins = { workspace: 'admin' as const, param: 'workspaceId' };

const ServerView = Type.Object({
  id: Type.String(), name: Type.String(), url: Type.String(), transport: Type.String(),
  has_credentials: Type.Boolean({ description: 'A bearer token is stored (encrypted; never shown)' }), created_at: Type.String(),
});
const ToolView = Type.Object({
  name: Type.String({ description: 'The MCP tool name' }), function_name: Type.String({ description: 'The name the model sees' }),
  description: Type.String(), enabled: Type.Boolean(), needs_approval: Type.Boolean(), read_only: Type.Boolean({ description: 'Declared read-only by the server (a hint)' }),
});
const CallView = Type.Object({
  id: Type.String(), request_id: Type.String(), server_id: Type.String(), tool: Type.String(), arguments_bytes: Type.Integer(), arguments_sha256: Type.String(),
  outcome: Type.String({ description: 'ok, error, denied, pending, approved or refused' }), duration_ms: Type.Integer(), approval_id: Type.Union([Type.String(), Type.Null()]), created_at: Type.String(),
});

const serverView = (s: ToolServer) => ({ id: s.id, name: s.name, url: s.url, transport: s.transport, has_credentials: s.hasCredentials, created_at: new Date(s.createdAt).toISOString() });
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

/** Workspace tool servers (workspace admins), the origin allow-list (instance admins), tool call records. */
export function toolRoutes(admin: AdminApi, catalog: ToolCatalog, records: CallRecords): void {
  const serverOf = async (workspaceId: string, id: string): Promise<ToolServer> => {
    const s = await catalog.server(workspaceId, id);
    if (!s) throw new GatewayError('not_found', 'No such tool server in this workspace.', { param: 'serverId' });
    return s;
  };
  admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/tool-servers', summary: 'Register an MCP tool server', tag, access: admins, status: 201,
    body: Type.Object({
      name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,40}$' }),
      url: Type.String({ maxLength: 2000 }),
      transport: Type.Optional(Type.Union([Type.Literal('streamable-http'), Type.Literal('sse')])),
      bearer_token: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
    }),
    response: ServerView,
    handler: async ({ params, body }) => {
      const url = httpUrl(body.url);
      if ((await catalog.servers(params.workspaceId!)).some((s) => s.name === body.name)) throw new GatewayError('invalid_request', 'A tool server with this name exists in the workspace.', { param: 'name' });
      return serverView(await catalog.addServer({ workspaceId: params.workspaceId!, name: body.name, url, transport: body.transport ?? 'streamable-http', bearer: body.bearer_token ?? null }));
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/tool-servers', summary: 'List the workspace tool servers', tag, access: admins,
    response: Type.Object({ data: Type.Array(ServerView) }),
    handler: async ({ params }) => ({ data: (await catalog.servers(params.workspaceId!)).map(serverView) }),
  });
  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/tool-servers/:serverId', summary: 'Remove a tool server', tag, access: admins, status: 204,
    response: Type.Null(),
    handler: async ({ params }) => {
      await catalog.removeServer((await serverOf(params.workspaceId!, params.serverId!)).id);
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
    method: 'GET', path: '/workspaces/:workspaceId/tool-calls', summary: 'Tool call records (never the arguments): by request id, or the latest', tag, access: admins,
    query: Type.Object({ request_id: Type.Optional(Type.String({ maxLength: 60 })), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) }),
    response: Type.Object({ data: Type.Array(CallView) }),
    handler: async ({ params, query }) => ({ data: await records.list(params.workspaceId!, { ...(query.request_id ? { requestId: query.request_id } : {}), limit: query.limit ?? 100 }) }),
  });
}
