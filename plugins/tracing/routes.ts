import { GatewayError, Type, type AdminApi, type Static, type Store } from '../../kernel/index.js';

const tag = 'tracing';

const RequestView = Type.Object({
  id: Type.String({ description: 'The request id (x-svc-request-id)' }),
  created_at: Type.String({ description: 'ISO 8601 time the request arrived' }),
  workspace_id: Type.Union([Type.String(), Type.Null()]),
  person_id: Type.Union([Type.String(), Type.Null()]),
  key_id: Type.Union([Type.String(), Type.Null()]),
  provider: Type.Union([Type.String(), Type.Null()], { description: 'Set only when the request reached a provider' }),
  model: Type.Union([Type.String(), Type.Null()]),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cost_micro_usd: Type.Integer(),
  status: Type.Integer({ description: 'HTTP status sent (499: the client went away first)' }),
  error_code: Type.Union([Type.String(), Type.Null()]),
  latency_ms: Type.Integer(),
  ttft_ms: Type.Union([Type.Integer(), Type.Null()]),
  stream: Type.Boolean(),
});
type RequestView = Static<typeof RequestView>;

const SpanView = Type.Object({
  span_id: Type.String(),
  parent_span_id: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  offset_us: Type.Integer({ description: 'Start, microseconds after the request arrived' }),
  duration_us: Type.Integer(),
  status: Type.String(),
  attributes: Type.Record(Type.String(), Type.Unknown(), { description: 'Ids, models, tokens, costs, phase timings (svc.phases_us); never prompt or reply text' }),
});

const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]+_[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
  id: Type.Optional(Type.String({ maxLength: 40, description: 'One request id (x-svc-request-id)' })),
  workspace_id: Type.Optional(Type.String()),
  person_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  outcome: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('error')])),
});
type ListQuery = Static<typeof ListQuery>;

const Page = Type.Object({ data: Type.Array(RequestView), next_cursor: Type.Union([Type.String(), Type.Null()]) });
const Trace = Type.Object({ request: RequestView, spans: Type.Array(SpanView) });

type Row = Record<string, string | number | null>;
const num = (v: string | number | null): number => Number(v ?? 0);
const str = (v: string | number | null): string | null => (v === null ? null : String(v));

function view(r: Row): RequestView {
  return {
    id: String(r.id), created_at: new Date(num(r.created_at)).toISOString(), workspace_id: str(r.workspace_id), person_id: str(r.person_id),
    key_id: str(r.key_id), provider: str(r.provider), model: str(r.model), prompt_tokens: num(r.prompt_tokens), completion_tokens: num(r.completion_tokens),
    cost_micro_usd: num(r.cost_micro_usd), status: num(r.status), error_code: str(r.error_code), latency_ms: num(r.latency_ms),
    ttft_ms: r.ttft_ms === null ? null : num(r.ttft_ms), stream: num(r.stream) === 1,
  };
}

/** Recent usage records, newest first, filtered; keyset paging on (created_at, id). */
async function list(store: Store, q: ListQuery, workspaceId?: string): Promise<Static<typeof Page>> {
  const where: string[] = [];
  const params: Array<string | number> = [];
  const filters = { id: q.id, workspace_id: workspaceId ?? q.workspace_id, person_id: q.person_id, key_id: q.key_id, model: q.model };
  for (const [column, value] of Object.entries(filters)) {
    if (value === undefined || value === '') continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  if (q.outcome === 'ok') where.push('error_code is null');
  if (q.outcome === 'error') where.push('error_code is not null');
  if (q.cursor) {
    const at = q.cursor.indexOf('_');
    const t = Number(q.cursor.slice(0, at));
    where.push('(created_at < ? or (created_at = ? and id < ?))');
    params.push(t, t, q.cursor.slice(at + 1));
  }
  const limit = q.limit ?? 50;
  const rows = await store.execute<Row>(
    `select * from usage_records ${where.length ? `where ${where.join(' and ')}` : ''} order by created_at desc, id desc limit ${limit + 1}`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { data: page.map(view), next_cursor: rows.length > limit && last ? `${num(last.created_at)}_${String(last.id)}` : null };
}

/** One request's usage record and spans; 404 when unknown, pruned, or outside `workspaceId`. */
async function trace(store: Store, id: string, workspaceId?: string): Promise<Static<typeof Trace>> {
  const [record] = await store.execute<Row>('select * from usage_records where id = ?', [id]);
  if (!record || (workspaceId !== undefined && record.workspace_id !== workspaceId)) {
    throw new GatewayError('not_found', 'No request with that id: it is unknown, not yet recorded, or past the retention period.', { param: 'id' });
  }
  const spans = await store.execute<Row>('select * from spans where trace_id = ? order by start_us', [id]);
  const startUs = num(record.created_at) * 1000;
  return {
    request: view(record),
    spans: spans.map((s) => ({
      span_id: String(s.span_id), parent_span_id: str(s.parent_span_id), name: String(s.name), offset_us: Math.max(0, num(s.start_us) - startUs),
      duration_us: num(s.duration_us), status: String(s.status), attributes: JSON.parse(String(s.attributes)) as Record<string, unknown>,
    })),
  };
}

/**
 * The Requests page's admin routes: recent requests with filters and a request's trace, for
 * instance admins (every workspace) and workspace admins (their own).
 */
export function tracingRoutes(admin: AdminApi, store: Store): void {
  const ws = { workspace: 'admin', param: 'workspaceId' } as const;
  admin.route({
    method: 'GET', path: '/requests', summary: 'Recent model requests, newest first, with filters (instance admins)', tag, access: 'instance-admin', query: ListQuery, response: Page,
    handler: ({ query }) => list(store, query),
  });
  admin.route({
    method: 'GET', path: '/requests/:id', summary: "A request's usage record and trace spans, by x-svc-request-id (instance admins)", tag, access: 'instance-admin', response: Trace,
    handler: ({ params }) => trace(store, params.id!),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/requests', summary: "The workspace's recent model requests (its admins)", tag, access: ws, query: ListQuery, response: Page,
    handler: ({ query, params }) => list(store, query, params.workspaceId!),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/requests/:id', summary: "A workspace request's record and trace (its admins)", tag, access: ws, response: Trace,
    handler: ({ params }) => trace(store, params.id!, params.workspaceId!),
  });
}
