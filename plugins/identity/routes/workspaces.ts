import { GatewayError, Type, type Store } from '../../../kernel/index.js';
import { audit, checkEmail, checkName, isInstanceAdmin, signedIn, type Deps } from '../deps.js';
import { isUniqueViolation, personByEmail } from '../db-persons.js';
import {
  activeAdminCount,
  allWorkspaces,
  deleteMember,
  insertMember,
  insertWorkspace,
  listMembers,
  memberOf,
  renameWorkspace,
  updateMember,
  workspaceById,
  workspaceNamed,
  workspacesOf,
} from '../db-workspaces.js';
import { Empty, List, MemberView, RoleSchema, StatusSchema, WorkspaceView, type MemberViewT, type WorkspaceViewT } from '../views.js';

const tag = 'workspaces';
const member = (param = 'workspaceId') => ({ workspace: 'member' as const, param });
const wsAdmin = (param = 'workspaceId') => ({ workspace: 'admin' as const, param });

/** The workspace in the path (access already checked), or 404 when an instance admin names none. */
async function workspace(d: Deps, id: string | undefined, personId: string): Promise<WorkspaceViewT> {
  const ws = id ? await workspaceById(d.store, id, d.resolver.roleIn(personId, id)) : null;
  if (!ws) throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: 'workspaceId' });
  return ws;
}

async function existingMember(store: Store, workspaceId: string, personId: string | undefined): Promise<MemberViewT> {
  const m = personId ? await memberOf(store, workspaceId, personId) : null;
  if (!m) throw new GatewayError('not_found', 'No such member in this workspace.', { param: 'personId' });
  return m;
}

/** The checked name, refused when another workspace already has it (ignoring case). */
async function freeName(store: Store, raw: string, ownId: string | null): Promise<string> {
  const name = checkName(raw);
  const other = await workspaceNamed(store, name);
  if (other !== null && other !== ownId) throw new GatewayError('invalid_request', `A workspace named “${name}” already exists; choose another name.`, { param: 'name' });
  return name;
}

/** Refuses a change that would leave the workspace without an active admin. */
async function keepAnAdmin(store: Store, workspaceId: string, m: MemberViewT, after: { role: string; status: string } | null, param: string): Promise<void> {
  const losesAdmin = m.role === 'admin' && m.status === 'active' && (after === null || after.role !== 'admin' || after.status !== 'active');
  if (losesAdmin && (await activeAdminCount(store, workspaceId)) <= 1) {
    throw new GatewayError('invalid_request', 'A workspace needs at least one active admin.', { param });
  }
}

/** Workspaces and their members. Instance admins create workspaces and become their first admin. */
export function workspaceRoutes(d: Deps): void {
  const { admin, store, sync, log } = d;

  admin.route({
    method: 'GET',
    path: '/workspaces',
    summary: 'Workspaces the caller is an active member of; scope=all lists every workspace (instance admins)',
    tag,
    access: 'person',
    query: Type.Object({ scope: Type.Optional(Type.Union([Type.Literal('mine'), Type.Literal('all')])) }),
    response: List(WorkspaceView),
    handler: async ({ caller, query }) => {
      const c = signedIn(caller);
      if (c.keyWorkspaceId !== null) {
        const ws = await workspaceById(store, c.keyWorkspaceId, d.resolver.roleIn(c.personId, c.keyWorkspaceId));
        return { data: ws ? [ws] : [] };
      }
      if (query.scope === 'all') {
        if (!isInstanceAdmin(c)) throw new GatewayError('forbidden', 'Only an instance admin may list every workspace.');
        return { data: await allWorkspaces(store, c.personId) };
      }
      return { data: await workspacesOf(store, c.personId) };
    },
  });

  admin.route({
    method: 'POST',
    path: '/workspaces',
    summary: 'Create a workspace; the creator becomes its admin',
    tag,
    access: 'instance-admin',
    status: 201,
    body: Type.Object({ name: Type.String() }),
    response: WorkspaceView,
    handler: async ({ caller, body }) => {
      const c = signedIn(caller);
      const ws = await insertWorkspace(store, await freeName(store, body.name, null), c.personId);
      await sync.changed();
      audit(log, 'workspace_created', c.personId, ws.id, ws.id);
      return ws;
    },
  });

  admin.route({
    method: 'GET',
    path: '/workspaces/:workspaceId',
    summary: 'One workspace, with the caller’s role in it',
    tag,
    access: member(),
    response: WorkspaceView,
    handler: ({ caller, params }) => workspace(d, params.workspaceId, signedIn(caller).personId),
  });

  admin.route({
    method: 'PATCH',
    path: '/workspaces/:workspaceId',
    summary: 'Rename a workspace (workspace admins)',
    tag,
    access: wsAdmin(),
    body: Type.Object({ name: Type.String() }),
    response: WorkspaceView,
    handler: async ({ caller, params, body }) => {
      const c = signedIn(caller);
      const ws = await workspace(d, params.workspaceId, c.personId);
      const name = await freeName(store, body.name, ws.id);
      await renameWorkspace(store, ws.id, name);
      audit(log, 'workspace_renamed', c.personId, ws.id, ws.id);
      return { ...ws, name };
    },
  });

  admin.route({
    method: 'GET',
    path: '/workspaces/:workspaceId/members',
    summary: 'Members of a workspace',
    tag,
    access: member(),
    response: List(MemberView),
    handler: async ({ caller, params }) => {
      const ws = await workspace(d, params.workspaceId, signedIn(caller).personId);
      return { data: await listMembers(store, ws.id) };
    },
  });

  admin.route({
    method: 'POST',
    path: '/workspaces/:workspaceId/members',
    summary: 'Add an existing person to the workspace by email (workspace admins)',
    tag,
    access: wsAdmin(),
    status: 201,
    body: Type.Object({ email: Type.String({ maxLength: 320 }), role: Type.Optional(RoleSchema) }),
    response: MemberView,
    handler: async ({ caller, params, body }) => {
      const c = signedIn(caller);
      const ws = await workspace(d, params.workspaceId, c.personId);
      const person = await personByEmail(store, checkEmail(body.email));
      if (!person) throw new GatewayError('invalid_request', 'No person has that email; an instance admin creates persons first.', { param: 'email' });
      const already = new GatewayError('invalid_request', 'That person is already a member of this workspace.', { param: 'email' });
      if (await memberOf(store, ws.id, person.id)) throw already;
      await insertMember(store, ws.id, person.id, body.role ?? 'member').catch((err: unknown) => {
        throw isUniqueViolation(err) ? already : err;
      });
      await sync.changed();
      audit(log, 'member_added', c.personId, person.id, ws.id);
      return existingMember(store, ws.id, person.id);
    },
  });

  admin.route({
    method: 'PATCH',
    path: '/workspaces/:workspaceId/members/:personId',
    summary: 'Change a member’s role, or suspend (status=suspended) or reinstate (status=active) them (workspace admins)',
    tag,
    access: wsAdmin(),
    body: Type.Object({ role: Type.Optional(RoleSchema), status: Type.Optional(StatusSchema) }),
    response: MemberView,
    handler: async ({ caller, params, body }) => {
      const c = signedIn(caller);
      const ws = await workspace(d, params.workspaceId, c.personId);
      const m = await existingMember(store, ws.id, params.personId);
      await keepAnAdmin(store, ws.id, m, { role: body.role ?? m.role, status: body.status ?? m.status }, body.role === 'member' ? 'role' : 'status');
      await updateMember(store, ws.id, m.person_id, { role: body.role, status: body.status });
      await sync.changed();
      audit(log, 'member_updated', c.personId, m.person_id, ws.id);
      return existingMember(store, ws.id, m.person_id);
    },
  });

  admin.route({
    method: 'DELETE',
    path: '/workspaces/:workspaceId/members/:personId',
    summary: 'Remove a member; their keys in this workspace are revoked (workspace admins)',
    tag,
    access: wsAdmin(),
    status: 204,
    response: Empty,
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const ws = await workspace(d, params.workspaceId, c.personId);
      const m = await existingMember(store, ws.id, params.personId);
      await keepAnAdmin(store, ws.id, m, null, 'personId');
      await deleteMember(store, ws.id, m.person_id);
      await sync.changed();
      audit(log, 'member_removed', c.personId, m.person_id, ws.id);
      return null;
    },
  });
}
