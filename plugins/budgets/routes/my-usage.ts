import { Type } from '../../../kernel/index.js';
import type { Cap } from '../caps.js';
import { CapView, capViews } from './cap-views.js';
import type { RouteDeps } from './deps.js';
import { Report, report } from './spend.js';

const MyUsage = Type.Object({
  workspace_id: Type.String(),
  person_id: Type.String(),
  spend: Report,
  caps: Type.Array(CapView, { description: 'Every cap a request of the caller in this workspace counts against: instance, workspace, their member cap, their keys’ caps' }),
  room_micro_usd: Type.Union([Type.Integer(), Type.Null()], { description: 'The least room left under those caps; null when none applies' }),
});

/** Does `cap` limit requests `personId` makes in `workspaceId` (with a session or one of their keys)? */
function applies(d: RouteDeps, cap: Cap, workspaceId: string, personId: string): boolean {
  if (cap.scope === 'instance') return true;
  if (cap.workspaceId !== workspaceId) return false;
  if (cap.scope === 'workspace') return true;
  if (cap.scope === 'member') return cap.subjectId === personId;
  return d.identity.key(cap.subjectId)?.personId === personId;
}

/**
 * "My usage" for any member: their own spend in the workspace over the last 30 days by model, and
 * the room left under each cap their requests count against, without the admin-only cap routes.
 */
export function myUsageRoutes(d: RouteDeps): void {
  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/my-usage', summary: "The caller's own spend in the workspace and the room left under each cap that applies to them (any member)",
    tag: 'budgets', access: { workspace: 'member', param: 'workspaceId' }, response: MyUsage,
    handler: async ({ params, caller }) => {
      const workspaceId = params.workspaceId!;
      const personId = caller!.personId;
      const caps = await capViews(d.store, d.sync.current.caps.filter((c) => applies(d, c, workspaceId, personId)));
      const spend = await report(d, { group_by: 'model', person_id: personId }, workspaceId);
      const room = caps.length === 0 ? null : Math.min(...caps.map((c) => c.remaining_micro_usd));
      return { workspace_id: workspaceId, person_id: personId, spend, caps, room_micro_usd: room };
    },
  });
}
