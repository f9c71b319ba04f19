import { randomUUID } from 'node:crypto';
import { GatewayError, Type, type Caller, type Static } from '../../../kernel/index.js';
import type { Cap, Scope } from '../caps.js';
import type { Period } from '../periods.js';
import { capFromRow } from '../snapshot.js';
import { CapView, capViews, normalizeThresholds, PeriodSchema, ThresholdsSchema } from './cap-views.js';
import type { RouteDeps } from './deps.js';

const tag = 'budgets';
const List = Type.Object({ data: Type.Array(CapView) });
const Amount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Cap amount in micro-USD' });
const InstanceCapBody = Type.Object({ amount_micro_usd: Amount, period: PeriodSchema, alert_thresholds: Type.Optional(ThresholdsSchema) });
const WorkspaceCapBody = Type.Object({
  scope: Type.Union([Type.Literal('workspace'), Type.Literal('member'), Type.Literal('key')]),
  person_id: Type.Optional(Type.String({ minLength: 1 })),
  key_id: Type.Optional(Type.String({ minLength: 1 })),
  amount_micro_usd: Amount,
  period: PeriodSchema,
  alert_thresholds: Type.Optional(ThresholdsSchema),
});
const UpdateBody = Type.Object({ amount_micro_usd: Type.Optional(Amount), period: Type.Optional(PeriodSchema), alert_thresholds: Type.Optional(ThresholdsSchema) });
const Empty = Type.Object({});

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_request', message, { param });
const actor = (c: Caller | null): string => c?.personId ?? 'unknown';

async function capById(d: RouteDeps, id: string): Promise<Cap | undefined> {
  const rows = await d.store.execute<Parameters<typeof capFromRow>[0]>('select * from budget_caps where id = ?', [id]);
  return rows[0] ? capFromRow(rows[0]) : undefined;
}

/** One cap per subject and period: another cap of the same subject and period is refused at `period`. */
async function refuseTakenPeriod(d: RouteDeps, c: Omit<Cap, 'id'>, ownId: string | null): Promise<void> {
  const taken = await d.store.execute<{ id: string }>('select id from budget_caps where scope = ? and workspace_id = ? and subject_id = ? and period = ?', [c.scope, c.workspaceId, c.subjectId, c.period]);
  if (taken.some((r) => r.id !== ownId)) throw bad('period', `A ${c.period} cap already exists for this ${c.scope}; change its amount instead.`);
}

async function insertCap(d: RouteDeps, c: Omit<Cap, 'id'>, caller: Caller | null): Promise<Cap> {
  await refuseTakenPeriod(d, c, null);
  const cap: Cap = { ...c, id: randomUUID(), thresholds: normalizeThresholds(c.thresholds) };
  const now = Date.now();
  try {
    await d.store.execute(
      'insert into budget_caps (id, scope, workspace_id, subject_id, amount_micro_usd, period, thresholds, created_at, updated_at) values (?,?,?,?,?,?,?,?,?)',
      [cap.id, cap.scope, cap.workspaceId, cap.subjectId, cap.amountMicroUsd, cap.period, JSON.stringify(cap.thresholds), now, now],
    );
  } catch {
    throw bad('period', `A ${c.period} cap already exists for this ${c.scope}; change its amount instead.`);
  }
  await d.sync.changed();
  d.log.info('budget.cap_changed', { cap_id: cap.id, scope: cap.scope, action: 'created', actor_id: actor(caller) });
  return cap;
}

async function updateCap(d: RouteDeps, cap: Cap, body: Static<typeof UpdateBody>, caller: Caller | null): Promise<Cap> {
  const next: Cap = {
    ...cap, amountMicroUsd: body.amount_micro_usd ?? cap.amountMicroUsd, period: (body.period as Period | undefined) ?? cap.period, thresholds: normalizeThresholds(body.alert_thresholds ?? cap.thresholds),
  };
  // Every charge adds to each period's running total, so a cap moved to another period reads that period's spend at once.
  if (next.period !== cap.period) await refuseTakenPeriod(d, next, cap.id);
  await d.store.execute('update budget_caps set amount_micro_usd = ?, period = ?, thresholds = ?, updated_at = ? where id = ?', [
    next.amountMicroUsd, next.period, JSON.stringify(next.thresholds), Date.now(), cap.id,
  ]);
  await d.sync.changed();
  d.log.info('budget.cap_changed', { cap_id: cap.id, scope: cap.scope, action: 'updated', actor_id: actor(caller) });
  return next;
}

async function deleteCap(d: RouteDeps, cap: Cap, caller: Caller | null): Promise<void> {
  await d.store.execute('delete from budget_caps where id = ?', [cap.id]);
  await d.sync.changed();
  d.log.info('budget.cap_changed', { cap_id: cap.id, scope: cap.scope, action: 'deleted', actor_id: actor(caller) });
}

/** The subject of a workspace cap: the workspace itself, an active member, or a key of the workspace. */
async function subjectOf(d: RouteDeps, workspaceId: string, body: Static<typeof WorkspaceCapBody>): Promise<string> {
  if (body.scope === 'workspace') return '';
  if (body.scope === 'member') {
    if (!body.person_id || d.identity.roleIn(body.person_id, workspaceId) === null) throw bad('person_id', 'person_id must name a member of this workspace.');
    return body.person_id;
  }
  if (!body.key_id || d.identity.key(body.key_id)?.workspaceId !== workspaceId) throw bad('key_id', 'key_id must name an API key of this workspace.');
  return body.key_id!;
}

/**
 * Caps in the admin API: instance caps by instance admins (who may also see and change every
 * cap); workspace, member and key caps by the workspace's admins.
 */
export function capRoutes(d: RouteDeps): void {
  const wsAccess = { workspace: 'admin' as const, param: 'workspaceId' };
  const inWorkspace = async (workspaceId: string, capId: string): Promise<Cap> => {
    const cap = await capById(d, capId);
    if (!cap || cap.scope === 'instance' || cap.workspaceId !== workspaceId) throw new GatewayError('not_found', 'No such cap in this workspace.', { param: 'capId' });
    return cap;
  };

  d.admin.route({
    method: 'GET', path: '/budget-caps', summary: 'List every cap (instance admins)', tag, access: 'instance-admin', response: List,
    handler: async () => ({ data: await capViews(d.store, d.sync.current.caps) }),
  });
  d.admin.route({
    method: 'POST', path: '/budget-caps', summary: 'Create an instance cap', tag, access: 'instance-admin', body: InstanceCapBody, response: CapView, status: 201,
    handler: async ({ body, caller }) => {
      const cap = await insertCap(d, { scope: 'instance', workspaceId: '', subjectId: '', amountMicroUsd: body.amount_micro_usd, period: body.period as Period, thresholds: body.alert_thresholds ?? d.defaults }, caller);
      return (await capViews(d.store, [cap]))[0]!;
    },
  });
  d.admin.route({
    method: 'PATCH', path: '/budget-caps/:capId', summary: 'Change any cap (instance admins)', tag, access: 'instance-admin', body: UpdateBody, response: CapView,
    handler: async ({ params, body, caller }) => {
      const cap = await capById(d, params.capId!);
      if (!cap) throw new GatewayError('not_found', 'No such cap.', { param: 'capId' });
      return (await capViews(d.store, [await updateCap(d, cap, body, caller)]))[0]!;
    },
  });
  d.admin.route({
    method: 'DELETE', path: '/budget-caps/:capId', summary: 'Delete any cap (instance admins)', tag, access: 'instance-admin', response: Empty, status: 204,
    handler: async ({ params, caller }) => {
      const cap = await capById(d, params.capId!);
      if (!cap) throw new GatewayError('not_found', 'No such cap.', { param: 'capId' });
      await deleteCap(d, cap, caller);
      return {};
    },
  });

  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/budget-caps', summary: "List a workspace's caps (workspace, member, key)", tag, access: wsAccess, response: List,
    handler: async ({ params }) => ({ data: await capViews(d.store, d.sync.current.caps.filter((c) => c.scope !== 'instance' && c.workspaceId === params.workspaceId)) }),
  });
  d.admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/budget-caps', summary: 'Create a workspace, member or key cap', tag, access: wsAccess, body: WorkspaceCapBody, response: CapView, status: 201,
    handler: async ({ params, body, caller }) => {
      const workspaceId = params.workspaceId!;
      const subjectId = await subjectOf(d, workspaceId, body);
      const cap = await insertCap(
        d,
        { scope: body.scope as Scope, workspaceId, subjectId, amountMicroUsd: body.amount_micro_usd, period: body.period as Period, thresholds: body.alert_thresholds ?? d.defaults },
        caller,
      );
      return (await capViews(d.store, [cap]))[0]!;
    },
  });
  d.admin.route({
    method: 'PATCH', path: '/workspaces/:workspaceId/budget-caps/:capId', summary: "Change a workspace cap's amount, period or alert thresholds", tag, access: wsAccess, body: UpdateBody, response: CapView,
    handler: async ({ params, body, caller }) => (await capViews(d.store, [await updateCap(d, await inWorkspace(params.workspaceId!, params.capId!), body, caller)]))[0]!,
  });
  d.admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/budget-caps/:capId', summary: 'Delete a workspace cap', tag, access: wsAccess, response: Empty, status: 204,
    handler: async ({ params, caller }) => {
      await deleteCap(d, await inWorkspace(params.workspaceId!, params.capId!), caller);
      return {};
    },
  });
}
