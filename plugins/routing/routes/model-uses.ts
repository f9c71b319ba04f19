import { Type, type AdminApi, type SnapshotSync } from '../../../kernel/index.js';
import type { Snapshot } from '../snapshot.js';

const Use = Type.Object({
  workspace_id: Type.String(),
  where: Type.Union([Type.Literal('route'), Type.Literal('fallback'), Type.Literal('default_model'), Type.Literal('pinned_model')]),
  route: Type.Union([Type.String(), Type.Null()], { description: 'The route, for route and fallback uses' }),
});

/**
 * Where routing names a model, across every workspace: what removing it would leave without a
 * model. The admin UI asks before removing a model and names these.
 */
export function modelUseRoutes(admin: AdminApi, sync: SnapshotSync<Snapshot>): void {
  admin.route({
    method: 'GET', path: '/model-uses', summary: 'Routes (model or fallback) and routing settings (default or pinned model) of every workspace that name a model (instance admins)',
    tag: 'routing', access: 'instance-admin',
    query: Type.Object({ model: Type.String({ minLength: 1, maxLength: 300 }) }),
    response: Type.Object({ data: Type.Array(Use) }),
    handler: ({ query }) => {
      const data: Array<{ workspace_id: string; where: 'route' | 'fallback' | 'default_model' | 'pinned_model'; route: string | null }> = [];
      for (const [workspaceId, routes] of sync.current.routes) {
        for (const r of routes) {
          if (r.model === query.model) data.push({ workspace_id: workspaceId, where: 'route', route: r.name });
          if (r.fallbacks.includes(query.model)) data.push({ workspace_id: workspaceId, where: 'fallback', route: r.name });
        }
      }
      for (const [workspaceId, s] of sync.current.settings) {
        if (s.defaultModel === query.model) data.push({ workspace_id: workspaceId, where: 'default_model', route: null });
        if (s.pinnedModel === query.model) data.push({ workspace_id: workspaceId, where: 'pinned_model', route: null });
      }
      return { data };
    },
  });
}
