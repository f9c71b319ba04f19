import { GatewayError, Type, type AdminApi, type Caller, type Static, type Store } from '../../kernel/index.js';

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
  route: Type.Union([Type.String(), Type.Null()], { description: 'The route that served it (auto or route/<name>), from its span' }),
  routing_rule: Type.Union([Type.String(), Type.Null()], { description: 'The model-selection rule that decided (explicit, pinned, signal, classified, default…)' }),
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
  provider: Type.Optional(Type.String()),
  outcome: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('error')])),
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'HTTP status sent' })),
  error_code: Type.Optional(Type.String({ maxLength: 64 })),
  route: Type.Optional(Type.String({ maxLength: 100, description: 'Route name (without route/)' })),
  routing_rule: Type.Optional(Type.String({ maxLength: 40 })),
  from: Type.Optional(Type.String({ maxLength: 40, description: 'Arrived at or after (ISO 8601 time)' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'Arrived before (ISO 8601 time)' })),
});
type ListQuery = Static<typeof ListQuery>;

const Page = Type.Object({ data: Type.Array(RequestView), next_cursor: Type.Union([Type.String(), Type.Null()]) });
const Trace = Type.Object({ request: RequestView, spans: Type.Array(SpanView) });

type Row = Record<string, string | number | null>;
const num = (v: string | number | null): number => Number(v ?? 0);
const str = (v: string | number | null): string | null => (v === null ? null : String(v));

function view(r: Row, routing: Map<string, { route: string | null; rule: string | null }> = new Map()): RequestView {
  const d = routing.get(String(r.id));
  return {
    id: String(r.id), created_at: new Date(num(r.created_at)).toISOString(), workspace_id: str(r.workspace_id), person_id: str(r.person_id),
    key_id: str(r.key_id), provider: str(r.provider), model: str(r.model), prompt_tokens: num(r.prompt_tokens), completion_tokens: num(r.completion_tokens),
    cost_micro_usd: num(r.cost_micro_usd), status: num(r.status), error_code: str(r.error_code), latency_ms: num(r.latency_ms),
    ttft_ms: r.ttft_ms === null ? null : num(r.ttft_ms), stream: num(r.stream) === 1, route: d?.route ?? null, routing_rule: d?.rule ?? null,
  };
}

/** Recent usage records, newest first, filtered; keyset paging on (created_at, id). */
async function list(store: Store, q: ListQuery, workspaceId?: string): Promise<Static<typeof Page>> {
  const where: string[] = [];
  const params: Array<string | number> = [];
  const filters = { id: q.id, workspace_id: workspaceId ?? q.workspace_id, person_id: q.person_id, key_id: q.key_id, model: q.model, provider: q.provider, status: q.status, error_code: q.error_code };
  for (const [column, value] of Object.entries(filters)) {
    if (value === undefined || value === '') continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  for (const [param, bound, op] of [['from', q.from, '>='], ['to', q.to, '<']] as const) {
    if (bound === undefined || bound === '') continue;
    const t = Date.parse(bound);
    if (Number.isNaN(t)) throw new GatewayError('invalid_request', `${param} must be a time such as 2026-05-01T00:00:00Z.`, { param });
    where.push(`created_at ${op} ?`);
    params.push(t);
  }
  // Route and rule live on the request's span (its attributes are JSON written by JSON.stringify, so the pair's text is exact).
  for (const [attr, value] of [['svc.route', q.route], ['svc.routing_rule', q.routing_rule]] as const) {
    if (value === undefined || value === '') continue;
    where.push("exists (select 1 from spans s where s.trace_id = usage_records.id and s.parent_span_id is null and s.attributes like ? escape '!')");
    params.push(`%${JSON.stringify(attr)}:${JSON.stringify(value).replace(/[!%_]/g, '!$&')}%`);
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
  const routing = await routingOf(store, page.map((r) => String(r.id)));
  return { data: page.map((r) => view(r, routing)), next_cursor: rows.length > limit && last ? `${num(last.created_at)}_${String(last.id)}` : null };
}

/** The route and rule of each request, read from its request span (one query per page). */
async function routingOf(store: Store, ids: string[]): Promise<Map<string, { route: string | null; rule: string | null }>> {
  const out = new Map<string, { route: string | null; rule: string | null }>();
  if (ids.length === 0) return out;
  const rows = await store.execute<Row>(`select trace_id, attributes from spans where parent_span_id is null and trace_id in (${ids.map(() => '?').join(',')})`, ids);
  for (const r of rows) {
    const a = JSON.parse(String(r.attributes)) as Record<string, unknown>;
    out.set(String(r.trace_id), { route: typeof a['svc.route'] === 'string' ? a['svc.route'] : null, rule: typeof a['svc.routing_rule'] === 'string' ? a['svc.routing_rule'] : null });
  }
  return out;
}

/** One request's usage record and spans; 404 when unknown, pruned, or outside `workspaceId`. */
async function trace(store: Store, id: string, workspaceId?: string, personId?: string): Promise<Static<typeof Trace>> {
  const [record] = await store.execute<Row>('select * from usage_records where id = ?', [id]);
  if (!record || (workspaceId !== undefined && record.workspace_id !== workspaceId) || (personId !== undefined && record.person_id !== personId)) {
    throw new GatewayError('not_found', 'No request with that id: it is unknown, not yet recorded, or past the retention period.', { param: 'id' });
  }
  const spans = await store.execute<Row>('select * from spans where trace_id = ? order by start_us', [id]);
  const startUs = num(record.created_at) * 1000;
  return {
    request: view(record, await routingOf(store, [id])),
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
  const member = { workspace: 'member', param: 'workspaceId' } as const;
  const me = (caller: Caller | null): string => {
    if (!caller) throw new GatewayError('invalid_api_key', 'Sign in first.');
    return caller.personId;
  };
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
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/my-requests', summary: "The caller's own recent model requests in the workspace (any member)", tag, access: member, query: ListQuery, response: Page,
    handler: ({ query, params, caller }) => list(store, { ...query, person_id: me(caller) }, params.workspaceId!),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/my-requests/:id', summary: "One of the caller's own requests with its trace (any member)", tag, access: member, response: Trace,
    handler: ({ params, caller }) => trace(store, params.id!, params.workspaceId!, me(caller)),
  });
}
