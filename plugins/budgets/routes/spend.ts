import { GatewayError, Type, type Static } from '../../../kernel/index.js';
import type { RouteDeps } from './deps.js';

const tag = 'budgets';
const DAY = 86_400_000;

/** usage_records columns (plugins/tracing/migrations.ts) a report may group or filter by. */
const columns = { workspace: 'workspace_id', person: 'person_id', key: 'key_id', provider: 'provider', model: 'model' } as const;
type Dimension = keyof typeof columns;

const GroupBy = Type.Union(Object.keys(columns).map((k) => Type.Literal(k)));
const Query = Type.Object({
  from: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'First day (UTC, YYYY-MM-DD); default 30 days ago' })),
  to: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'Last day, inclusive; default today' })),
  group_by: Type.Optional(GroupBy),
  workspace_id: Type.Optional(Type.String()),
  person_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
});
type Query = Static<typeof Query>;

const Sums = { cost_micro_usd: Type.Integer(), requests: Type.Integer(), prompt_tokens: Type.Integer(), completion_tokens: Type.Integer() };
const Day = Type.Object({ date: Type.String(), ...Sums });
export const Report = Type.Object({
  from: Type.String(),
  to: Type.String(),
  total: Type.Object(Sums),
  series: Type.Array(Day, { description: 'Daily totals (UTC), days without requests left out' }),
  groups: Type.Optional(Type.Array(Type.Object({ id: Type.Union([Type.String(), Type.Null()]), ...Sums, series: Type.Array(Day) }))),
});
type Report = Static<typeof Report>;
type SumsOf = { cost_micro_usd: number; requests: number; prompt_tokens: number; completion_tokens: number };

function day(s: string | undefined, fallback: number, param: string): number {
  if (s === undefined) return Math.floor(fallback / DAY) * DAY;
  const t = Date.parse(`${s}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s) || Number.isNaN(t)) throw new GatewayError('invalid_request', `${param} must be a date YYYY-MM-DD.`, { param });
  return t;
}

const add = (a: SumsOf, b: SumsOf): void => {
  a.cost_micro_usd += b.cost_micro_usd;
  a.requests += b.requests;
  a.prompt_tokens += b.prompt_tokens;
  a.completion_tokens += b.completion_tokens;
};
const zero = (): SumsOf => ({ cost_micro_usd: 0, requests: 0, prompt_tokens: 0, completion_tokens: 0 });
const isoDay = (d: number): string => new Date(d * DAY).toISOString().slice(0, 10);

/** Totals and daily series from the usage records, optionally grouped by one dimension. */
export async function report(d: RouteDeps, q: Query, workspaceId?: string): Promise<Report> {
  const from = day(q.from, Date.now() - 29 * DAY, 'from');
  const to = day(q.to, Date.now(), 'to') + DAY;
  if (to <= from) throw new GatewayError('invalid_request', 'to must not be before from.', { param: 'to' });
  const where = ['created_at >= ?', 'created_at < ?'];
  const params: Array<string | number> = [from, to];
  const filters: Record<Dimension, string | undefined> = { workspace: workspaceId ?? q.workspace_id, person: q.person_id, key: q.key_id, provider: q.provider, model: q.model };
  for (const [dim, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    where.push(`${columns[dim as Dimension]} = ?`);
    params.push(value);
  }
  // Ungrouped reports group by day alone: PostgreSQL refuses a constant in GROUP BY (`group by ''`).
  const group = q.group_by ? columns[q.group_by as Dimension] : null;
  const rows = await d.store.execute<Record<string, string | number | null>>(
    `select ${group ?? 'null'} as g, created_at / ${DAY} as d, sum(cost_micro_usd) as cost, count(*) as n, sum(prompt_tokens) as pt, sum(completion_tokens) as ct
     from usage_records where ${where.join(' and ')} group by ${group ? `${group}, ` : ''}created_at / ${DAY} order by d`,
    params,
  );
  const total = zero();
  const series = new Map<number, SumsOf>();
  const groups = new Map<string | null, { sums: SumsOf; series: Report['series'] }>();
  for (const r of rows) {
    const s: SumsOf = { cost_micro_usd: Number(r.cost ?? 0), requests: Number(r.n), prompt_tokens: Number(r.pt ?? 0), completion_tokens: Number(r.ct ?? 0) };
    const dayIndex = Number(r.d);
    add(total, s);
    const ds = series.get(dayIndex) ?? zero();
    add(ds, s);
    series.set(dayIndex, ds);
    if (!q.group_by) continue;
    const id = r.g === null ? null : String(r.g);
    const g = groups.get(id) ?? { sums: zero(), series: [] };
    add(g.sums, s);
    g.series.push({ date: isoDay(dayIndex), ...s });
    groups.set(id, g);
  }
  const out: Report = {
    from: new Date(from).toISOString().slice(0, 10),
    to: new Date(to - DAY).toISOString().slice(0, 10),
    total,
    series: [...series].map(([k, s]) => ({ date: isoDay(k), ...s })),
  };
  if (q.group_by) out.groups = [...groups].map(([id, g]) => ({ id, ...g.sums, series: g.series })).sort((a, b) => b.cost_micro_usd - a.cost_micro_usd);
  return out;
}

/**
 * Spend reporting from the usage records: totals and daily series by workspace, person, key,
 * provider and model; a provider's spend split by workspace, person and key (`provider=…&
 * group_by=workspace`). Instance admins see everything; workspace admins their workspace.
 */
export function spendRoutes(d: RouteDeps): void {
  d.admin.route({
    method: 'GET', path: '/spend', summary: 'Spend of the whole instance (instance admins)', tag, access: 'instance-admin', query: Query, response: Report,
    handler: ({ query }) => report(d, query),
  });
  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/spend', summary: "Spend of one workspace (its admins)", tag, access: { workspace: 'admin', param: 'workspaceId' },
    query: Type.Omit(Query, ['workspace_id']), response: Report,
    handler: ({ params, query }) => report(d, query, params.workspaceId!),
  });
}
