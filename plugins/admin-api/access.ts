import { GatewayError, type AdminAccess, type Caller, type IdentityService } from '../../kernel/index.js';

/**
 * Checks the caller against a route's access rule. A workspace the caller cannot see answers
 * 404 not_found (its existence is not revealed); a visible one without the role answers 403.
 * A key only ever acts inside its own workspace.
 */
export function checkAccess(access: AdminAccess, caller: Caller | null, params: Record<string, string>, identity: IdentityService | undefined): void {
  if (access === 'public') return;
  if (!caller) throw new GatewayError('invalid_api_key', 'Sign in first: send a session token or an svc_ key as a bearer token.');
  if (access === 'person') return;
  if (access === 'instance-admin') {
    if (!caller.instanceAdmin || caller.via === 'key') throw new GatewayError('forbidden', 'Only an instance admin signed in as a person may do this.');
    return;
  }
  const workspaceId = params[access.param] ?? '';
  if (caller.keyWorkspaceId !== null && caller.keyWorkspaceId !== workspaceId) {
    throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: access.param });
  }
  if (caller.instanceAdmin && caller.via === 'session') return;
  const role = identity?.roleIn(caller.personId, workspaceId) ?? null;
  if (role === null) throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: access.param });
  if (access.workspace === 'admin' && role !== 'admin') throw new GatewayError('forbidden', 'Only a workspace admin may do this.');
}
