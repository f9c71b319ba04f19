import { toGatewayError, type AdminRouteDef, type AuditEntryInput, type AuditLog, type AuditNote, type Caller, type RouteContext } from '../../kernel/index.js';
import { describeChanges } from './changes.js';

const verbs = { POST: 'create', PUT: 'set', PATCH: 'update', DELETE: 'delete', GET: 'read' } as const;

/** `keys.create` for `POST /workspaces/:workspaceId/keys`: the path's words without its parameters and the leading `workspaces` of a workspace's resource. */
export function actionOf(def: Pick<AdminRouteDef, 'method' | 'path' | 'audit'>): string {
  if (def.audit && def.audit.action) return def.audit.action;
  const words = def.path.split('/').filter((w) => w && !w.startsWith(':'));
  if (words.length > 1 && words[0] === 'workspaces') words.shift();
  return `${words.join('.') || 'root'}.${verbs[def.method]}`;
}

/** Whether a request to this route is recorded, given how it ended. */
export function audited(def: Pick<AdminRouteDef, 'method' | 'audit'>, failed: boolean): boolean {
  if (def.audit === false) return false;
  if (failed) return def.audit?.attempts === true;
  return def.method !== 'GET' || def.audit !== undefined;
}

/** The id of what was acted on: the path's last parameter, else the id or name of what a creation returned. */
function resourceIdOf(params: Record<string, string>, result: unknown): string | null {
  const values = Object.values(params);
  if (values.length > 0 && !('workspaceId' in params && values.length === 1)) return values.at(-1) ?? null;
  const r = result as { id?: unknown; name?: unknown } | null;
  if (r && typeof r === 'object') {
    if (typeof r.id === 'string') return r.id;
    if (typeof r.name === 'string') return r.name;
  }
  return params.workspaceId ?? null;
}

export interface Outcome {
  result?: unknown;
  error?: unknown;
}

/** The audit entry of one admin API request. */
export function entryOf(def: AdminRouteDef, rc: RouteContext, caller: Caller | null, params: Record<string, string>, body: unknown, note: AuditNote, outcome: Outcome): AuditEntryInput {
  const changes = describeChanges(def.body, body);
  const failure = outcome.error !== undefined ? toGatewayError(outcome.error).code : (note.error_code ?? null);
  const words = def.path.split('/').filter((w) => w && !w.startsWith(':'));
  return {
    action: actionOf(def),
    outcome: failure === null ? 'success' : 'failure',
    actor_id: note.actor_id !== undefined ? note.actor_id : (caller?.personId ?? null),
    actor_via: caller?.via ?? null,
    actor_key_id: caller?.keyId ?? null,
    client_address: rc.clientAddress || null,
    request_id: rc.id,
    route: `${def.method} ${def.path}`,
    resource_type: words.at(-1) ?? 'root',
    resource_id: note.resource_id !== undefined ? note.resource_id : resourceIdOf(params, outcome.result),
    workspace_id: note.workspace_id !== undefined ? note.workspace_id : (params.workspaceId ?? caller?.keyWorkspaceId ?? null),
    fields: changes.fields,
    values: changes.values,
    error_code: failure,
  };
}

/** Records the entry when the route is audited and an audit log is there; never throws. */
export async function recordRequest(log: AuditLog | undefined, def: AdminRouteDef, rc: RouteContext, caller: Caller | null, params: Record<string, string>, body: unknown, note: AuditNote, outcome: Outcome): Promise<void> {
  if (!log || !audited(def, outcome.error !== undefined)) return;
  await log.record(entryOf(def, rc, caller, params, body, note, outcome));
}
