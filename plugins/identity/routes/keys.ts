import { GatewayError, Type, type Caller } from '../../../kernel/index.js';
import { audit, checkName, isInstanceAdmin, requireSession, signedIn, type Deps } from '../deps.js';
import { activeKeyNamed, insertKey, keyIn, listKeys, revokeKey, workspaceById } from '../db-workspaces.js';
import { keyPrefix, newSecret } from '../secrets.js';
import { CreatedKeyView, Empty, KeyView, List } from '../views.js';

const tag = 'keys';
const member = { workspace: 'member' as const, param: 'workspaceId' };

/** Workspace admins (and instance admins) see every key of the workspace; members their own. */
function seesAll(d: Deps, c: Caller, workspaceId: string): boolean {
  return isInstanceAdmin(c) || d.resolver.roleIn(c.personId, workspaceId) === 'admin';
}

/**
 * API keys: created by a member in a workspace, shown once, stored as a hash; a key acts as its
 * creator in that workspace only.
 */
export function keyRoutes(d: Deps): void {
  const { admin, store, sync, log } = d;

  admin.route({
    method: 'POST',
    path: '/workspaces/:workspaceId/keys',
    summary: 'Create an API key in the workspace, acting as the caller; the value is shown only in this response',
    tag,
    access: member,
    status: 201,
    body: Type.Object({ name: Type.String() }),
    response: CreatedKeyView,
    handler: async ({ caller, params, body }) => {
      const c = signedIn(caller);
      requireSession(c, 'Creating a key');
      const workspaceId = params.workspaceId ?? '';
      // A key acts as its creator, so only an active member can own one (an instance admin too).
      if (d.resolver.roleIn(c.personId, workspaceId) === null) {
        if (!(await workspaceById(store, workspaceId, null))) throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: 'workspaceId' });
        throw new GatewayError('forbidden', 'Only an active member of the workspace can create a key in it.');
      }
      const name = checkName(body.name);
      // Per owner: each member may have their own "laptop"; admins see the owner beside the name.
      if (await activeKeyNamed(store, workspaceId, c.personId, name)) {
        throw new GatewayError('invalid_request', `You already have an active key named “${name}” in this workspace; choose another name or revoke that key first.`, { param: 'name' });
      }
      const value = newSecret(keyPrefix);
      const key = await insertKey(store, workspaceId, c.personId, name, value);
      await sync.changed();
      audit(log, 'key_created', c.personId, key.id, workspaceId);
      return { ...key, key: value };
    },
  });

  admin.route({
    method: 'GET',
    path: '/workspaces/:workspaceId/keys',
    summary: 'API keys of the workspace: a member sees their own, a workspace admin every one (never the value)',
    tag,
    access: member,
    response: List(KeyView),
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const workspaceId = params.workspaceId ?? '';
      if (!(await workspaceById(store, workspaceId, null))) throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: 'workspaceId' });
      const owner = seesAll(d, c, workspaceId) ? null : c.personId;
      return { data: await listKeys(store, workspaceId, owner, (id) => d.lastUsed.unflushed(id)) };
    },
  });

  admin.route({
    method: 'DELETE',
    path: '/workspaces/:workspaceId/keys/:keyId',
    summary: 'Revoke an API key: the own one, or any of the workspace for its admins; at once on every replica',
    tag,
    access: member,
    status: 204,
    response: Empty,
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const workspaceId = params.workspaceId ?? '';
      const key = await keyIn(store, workspaceId, params.keyId ?? '');
      if (!key || (key.person_id !== c.personId && !seesAll(d, c, workspaceId))) {
        throw new GatewayError('not_found', 'No such key in this workspace, or not yours.', { param: 'keyId' });
      }
      if (key.revoked_at === null) {
        await revokeKey(store, key.id);
        await sync.changed();
        audit(log, 'key_revoked', c.personId, key.id, workspaceId);
      }
      return null;
    },
  });
}
