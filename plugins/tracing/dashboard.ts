import { Type, type AdminApi, type Static, type Store } from '../../kernel/index.js';

const tag = 'tracing';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Each range and the width of its chart's buckets. */
const ranges = { '24h': { span: DAY, bucket: HOUR }, '7d': { span: 7 * DAY, bucket: 6 * HOUR }, '30d': { span: 30 * DAY, bucket: DAY } } as const;
type Range = keyof typeof ranges;

const Query = Type.Object({ range: Type.Optional(Type.Union(Object.keys(ranges).map((r) => Type.Literal(r)), { default: '24h' })) });
const Top = Type.Array(Type.Object({ id: Type.Union([Type.String(), Type.Null()]), requests: Type.Integer(), cost_micro_usd: Type.Integer() }));
const Dashboard = Type.Object({
  range: Type.String(),
  from: Type.String(),
  to: Type.String(),
  bucket_ms: Type.Integer(),
  totals: Type.Object({ requests: Type.Integer(), errors: Type.Integer(), cost_micro_usd: Type.Integer(), p50_ms: Type.Union([Type.Integer(), Type.Null()]), p95_ms: Type.Union([Type.Integer(), Type.Null()]) }),
  series: Type.Array(Type.Object({ start: Type.String(), requests: Type.Integer(), errors: Type.Integer(), cost_micro_usd: Type.Integer() })),
  top: Type.Object({ models: Top, persons: Top, keys: Top, workspaces: Top, routes: Top }),
  upstream_errors: Type.Array(Type.Object({ provider: Type.String(), error_code: Type.String(), count: Type.Integer() })),
});
type Dashboard = Static<typeof Dashboard>;
type Row = Record<string, string | number | null>;
const n = (v: string | number | null | undefined): number => Number(v ?? 0);

/** The home page's figures over usage_records (and, for routes, the request spans) of one range. */
async function dashboard(store: Store, range: Range, workspaceId?: string, now = Date.now()): Promise<Dashboard> {
  const { span, bucket } = ranges[range];
  const to = Math.ceil(now / bucket) * bucket;
  const from = to - span;
  const where = `created_at >= ? and created_at < ?${workspaceId ? ' and workspace_id = ?' : ''}`;
  const params: Array<string | number> = workspaceId ? [from, to, workspaceId] : [from, to];
  const sums = 'count(*) as requests, sum(case when error_code is null then 0 else 1 end) as errors, sum(cost_micro_usd) as cost';
  const [total] = await store.execute<Row>(`select ${sums} from usage_records where ${where}`, params);
  const count = n(total?.requests);
  const at = async (q: number): Promise<number | null> => {
    if (count === 0) return null;
    const [r] = await store.execute<Row>(`select latency_ms from usage_records where ${where} order by latency_ms limit 1 offset ${Math.min(count - 1, Math.floor(q * count))}`, params);
    return r ? n(r.latency_ms) : null;
  };
  const buckets = await store.execute<Row>(`select (created_at - ${from}) / ${bucket} as b, ${sums} from usage_records where ${where} group by (created_at - ${from}) / ${bucket}`, params);
  const byBucket = new Map(buckets.map((r) => [Math.floor(n(r.b)), r]));
  const series = Array.from({ length: span / bucket }, (_, i) => {
    const r = byBucket.get(i);
    return { start: new Date(from + i * bucket).toISOString(), requests: n(r?.requests), errors: n(r?.errors), cost_micro_usd: n(r?.cost) };
  });
  const top = async (column: string): Promise<Dashboard['top']['models']> =>
    (await store.execute<Row>(`select ${column} as id, count(*) as requests, sum(cost_micro_usd) as cost from usage_records where ${where} group by ${column} order by count(*) desc limit 5`, params))
      .map((r) => ({ id: r.id === null ? null : String(r.id), requests: n(r.requests), cost_micro_usd: n(r.cost) }));
  const upstream = await store.execute<Row>(
    `select provider, error_code, count(*) as c from usage_records where ${where} and provider is not null and error_code is not null group by provider, error_code order by count(*) desc limit 20`,
    params,
  );
  return {
    range, from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket_ms: bucket,
    totals: { requests: count, errors: n(total?.errors), cost_micro_usd: n(total?.cost), p50_ms: await at(0.5), p95_ms: await at(0.95) },
    series,
    top: { models: await top('model'), persons: await top('person_id'), keys: await top('key_id'), workspaces: await top('workspace_id'), routes: await routes(store, from, to, workspaceId) },
    upstream_errors: upstream.map((r) => ({ provider: String(r.provider), error_code: String(r.error_code), count: n(r.c) })),
  };
}

/** A request span attribute as SQL text, in each dialect (the attributes column is JSON text). */
const attribute = (dialect: Store['dialect'], name: string): string =>
  dialect === 'sqlite' ? `json_extract(attributes, '$."${name}"')` : `(attributes::json ->> '${name}')`;

/**
 * Requests per route over the whole range, counted by the database: the route is kept on the
 * request span only (spans are kept 30 days by default, as long as the longest range).
 */
async function routes(store: Store, from: number, to: number, workspaceId?: string): Promise<Dashboard['top']['routes']> {
  const route = attribute(store.dialect, 'svc.route');
  const cost = store.dialect === 'sqlite' ? attribute(store.dialect, 'svc.cost_micro_usd') : `${attribute(store.dialect, 'svc.cost_micro_usd')}::bigint`;
  const rows = await store.execute<Row>(
    `select ${route} as id, count(*) as requests, sum(${cost}) as cost from spans
     where parent_span_id is null and start_us >= ? and start_us < ? and ${route} is not null${workspaceId ? ` and ${attribute(store.dialect, 'svc.workspace_id')} = ?` : ''}
     group by ${route} order by count(*) desc, ${route} limit 5`,
    workspaceId ? [from * 1000, to * 1000, workspaceId] : [from * 1000, to * 1000],
  );
  return rows.map((r) => ({ id: String(r.id), requests: n(r.requests), cost_micro_usd: n(r.cost) }));
}

/** GET /dashboard (instance admins) and /workspaces/{id}/dashboard (its admins). */
export function dashboardRoutes(admin: AdminApi, store: Store): void {
  admin.route({
    method: 'GET', path: '/dashboard', summary: 'Requests, errors, spend and latency over a range, with the top models, persons, keys, workspaces and routes (instance admins)',
    tag, access: 'instance-admin', query: Query, response: Dashboard,
    handler: ({ query }) => dashboard(store, (query.range ?? '24h') as Range),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/dashboard', summary: "The same figures for one workspace (its admins)",
    tag, access: { workspace: 'admin', param: 'workspaceId' }, query: Query, response: Dashboard,
    handler: ({ query, params }) => dashboard(store, (query.range ?? '24h') as Range, params.workspaceId!),
  });
}
