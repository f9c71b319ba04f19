import { createHash } from 'node:crypto';
import { GatewayError, Type, type AdminApi, type CatalogService, type SnapshotSync, type Store } from '../../../kernel/index.js';
import { noSettings, type Route, type Snapshot } from '../snapshot.js';
import { missing, RouteFields, RouteName, routeView, RouteView, settingsView, SettingsView } from './views.js';

export interface RouteDeps {
  admin: AdminApi;
  catalog: CatalogService;
  store: Store;
  sync: SnapshotSync<Snapshot>;
}

const tag = 'routing';
const access = { workspace: 'admin' as const, param: 'workspaceId' };
const List = Type.Object({ data: Type.Array(RouteView) });

/** Changes whenever the texts the classifier reads change, so it embeds them once per version. */
const versionOf = (description: string, examples: string[]): string => createHash('sha256').update(JSON.stringify([description, examples])).digest('hex').slice(0, 16);

/** Every model a route or setting names must be an added model with a price; the error names the field. */
function checkModels(catalog: CatalogService, fields: Array<[param: string, name: string | null | undefined]>): void {
  for (const [param, name] of fields) {
    if (name !== null && name !== undefined && missing(catalog, [name]).length > 0) {
      throw new GatewayError('invalid_request', `${param}: ${name.slice(0, 200)} is not an added model with a price.`, { param });
    }
  }
}

function find(sync: SnapshotSync<Snapshot>, workspaceId: string, name: string, param = 'name'): Route {
  const r = sync.current.routes.get(workspaceId)?.find((x) => x.name === name);
  if (!r) throw new GatewayError('not_found', 'No such route in this workspace.', { param });
  return r;
}

async function save(d: RouteDeps, r: Route, insert: boolean): Promise<void> {
  const values = [r.model, JSON.stringify(r.fallbacks), r.description, JSON.stringify(r.examples), r.enabled ? 1 : 0, r.confidenceThreshold, r.margin, r.minChars, versionOf(r.description, r.examples), r.updatedAt.getTime()];
  if (insert) {
    const taken = await d.store.execute('select name from routing_routes where workspace_id = ? and name = ?', [r.workspaceId, r.name]);
    if (taken.length > 0) throw new GatewayError('invalid_request', 'name: a route with that name already exists in this workspace.', { param: 'name' });
    await d.store.execute(
      'insert into routing_routes (model, fallbacks, description, examples, enabled, confidence_threshold, margin, min_chars, version, updated_at, created_at, workspace_id, name) values (?,?,?,?,?,?,?,?,?,?,?,?,?)',
      [...values, r.createdAt.getTime(), r.workspaceId, r.name],
    );
  } else {
    await d.store.execute(
      'update routing_routes set model = ?, fallbacks = ?, description = ?, examples = ?, enabled = ?, confidence_threshold = ?, margin = ?, min_chars = ?, version = ?, updated_at = ? where workspace_id = ? and name = ?',
      [...values, r.workspaceId, r.name],
    );
  }
  await d.sync.changed();
}

/** Routes of a workspace (workspace admins; SPEC.md Route). */
export function routeRoutes(d: RouteDeps): void {
  const { admin, catalog, sync } = d;
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/routes', summary: "The workspace's routes, in name order; needs_model flags those a removed model left without one", tag, access, response: List,
    handler: ({ params }) => ({ data: (sync.current.routes.get(params.workspaceId!) ?? []).map((r) => routeView(r, catalog)) }),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/routes/:name', summary: 'One route', tag, access, response: RouteView,
    handler: ({ params }) => routeView(find(sync, params.workspaceId!, params.name!), catalog),
  });
  admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/routes', summary: 'Add a route (addressed as route/<name>)', tag, access, status: 201, response: RouteView,
    body: Type.Object({
      name: RouteName,
      model: RouteFields.model,
      fallbacks: Type.Optional(RouteFields.fallbacks),
      description: Type.Optional(RouteFields.description),
      examples: Type.Optional(RouteFields.examples),
      enabled: Type.Optional(RouteFields.enabled),
      confidence_threshold: Type.Optional(RouteFields.confidence_threshold),
      margin: Type.Optional(RouteFields.margin),
      min_chars: Type.Optional(RouteFields.min_chars),
    }),
    handler: async ({ params, body }) => {
      const fallbacks = body.fallbacks ?? [];
      checkModels(catalog, [['model', body.model], ...fallbacks.map((f, i) => [`fallbacks.${i}`, f] as [string, string])]);
      const now = new Date();
      const route: Route = {
        workspaceId: params.workspaceId!, name: body.name, model: body.model, fallbacks, description: body.description ?? '', examples: body.examples ?? [],
        enabled: body.enabled ?? true, confidenceThreshold: body.confidence_threshold ?? null, margin: body.margin ?? null, minChars: body.min_chars ?? null,
        version: '', createdAt: now, updatedAt: now,
      };
      await save(d, route, true);
      return routeView(find(sync, route.workspaceId, route.name), catalog);
    },
  });
  admin.route({
    method: 'PATCH', path: '/workspaces/:workspaceId/routes/:name', summary: 'Change a route (fields left out stay as they are)', tag, access, response: RouteView,
    body: Type.Partial(Type.Object(RouteFields)),
    handler: async ({ params, body }) => {
      const cur = find(sync, params.workspaceId!, params.name!);
      checkModels(catalog, [['model', body.model], ...(body.fallbacks ?? []).map((f, i) => [`fallbacks.${i}`, f] as [string, string])]);
      const next: Route = {
        ...cur, model: body.model ?? cur.model, fallbacks: body.fallbacks ?? cur.fallbacks, description: body.description ?? cur.description,
        examples: body.examples ?? cur.examples, enabled: body.enabled ?? cur.enabled,
        confidenceThreshold: body.confidence_threshold !== undefined ? body.confidence_threshold : cur.confidenceThreshold,
        margin: body.margin !== undefined ? body.margin : cur.margin, minChars: body.min_chars !== undefined ? body.min_chars : cur.minChars,
        updatedAt: new Date(),
      };
      await save(d, next, false);
      return routeView(find(sync, cur.workspaceId, cur.name), catalog);
    },
  });
  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/routes/:name', summary: 'Remove a route', tag, access, status: 204, response: Type.Null(),
    handler: async ({ params }) => {
      const cur = find(sync, params.workspaceId!, params.name!);
      await d.store.execute('delete from routing_routes where workspace_id = ? and name = ?', [cur.workspaceId, cur.name]);
      await sync.changed();
      return null;
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/routing', summary: "The workspace's routing settings", tag, access, response: SettingsView,
    handler: ({ params }) => settingsView(sync.current.settings.get(params.workspaceId!) ?? noSettings, catalog),
  });
  admin.route({
    method: 'PATCH', path: '/workspaces/:workspaceId/routing', summary: 'Change routing settings (fields left out stay; null clears a model or the code route)', tag, access, response: SettingsView,
    body: Type.Partial(Type.Object({
      default_model: Type.Union([Type.String({ maxLength: 300 }), Type.Null()]),
      pinned_model: Type.Union([Type.String({ maxLength: 300 }), Type.Null()]),
      routing_enabled: Type.Boolean(),
      code_route: Type.Union([RouteName, Type.Null()]),
    })),
    handler: async ({ params, body }) => {
      const workspaceId = params.workspaceId!;
      const cur = sync.current.settings.get(workspaceId) ?? noSettings;
      checkModels(catalog, [['default_model', body.default_model], ['pinned_model', body.pinned_model]]);
      if (body.code_route) find(sync, workspaceId, body.code_route, 'code_route');
      const next = {
        defaultModel: body.default_model !== undefined ? body.default_model : cur.defaultModel,
        pinnedModel: body.pinned_model !== undefined ? body.pinned_model : cur.pinnedModel,
        routingEnabled: body.routing_enabled ?? cur.routingEnabled,
        codeRoute: body.code_route !== undefined ? body.code_route : cur.codeRoute,
      };
      await d.store.execute(
        'insert into routing_settings (workspace_id, default_model, pinned_model, routing_enabled, code_route, updated_at) values (?,?,?,?,?,?) on conflict (workspace_id) do update set default_model = excluded.default_model, pinned_model = excluded.pinned_model, routing_enabled = excluded.routing_enabled, code_route = excluded.code_route, updated_at = excluded.updated_at',
        [workspaceId, next.defaultModel, next.pinnedModel, next.routingEnabled ? 1 : 0, next.codeRoute, Date.now()],
      );
      await sync.changed();
      return settingsView(next, catalog);
    },
  });
}
