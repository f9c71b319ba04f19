import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { GatewayError, Type, type Static } from '../../../kernel/index.js';
import { dailyRows, exportColumns, requestRows, type Cell, type ExportFilter, type Granularity } from '../usage-export.js';
import type { RouteDeps } from './deps.js';

declare module '../../../kernel/index.js' {
  interface LogEvents {
    /** An export that failed after its first rows were sent: the connection is cut, so the file is visibly incomplete. */
    'spend.export_failed': { request_id: string; rows: number; error_code: string };
  }
}

const DAY = 86_400_000;
const dayPattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

const Query = Type.Object({
  from: Type.Optional(Type.String({ pattern: dayPattern, description: 'First day (UTC, YYYY-MM-DD); default 30 days ago' })),
  to: Type.Optional(Type.String({ pattern: dayPattern, description: 'Last day, inclusive; default today' })),
  format: Type.Union([Type.Literal('csv'), Type.Literal('jsonl')], { default: 'csv', description: 'csv (RFC 4180, header row) or jsonl (one JSON object a line)' }),
  granularity: Type.Union([Type.Literal('request'), Type.Literal('day')], { default: 'request', description: 'One row per request, or per UTC day and workspace, person, key, provider and model' }),
  workspace_id: Type.Optional(Type.String()),
  person_id: Type.Optional(Type.String()),
  key_id: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
});
type Query = Static<typeof Query>;

function day(s: string | undefined, fallback: number, param: string): number {
  if (s === undefined) return Math.floor(fallback / DAY) * DAY;
  const t = Date.parse(`${s}T00:00:00Z`);
  // Date.parse rolls 2025-02-30 over to March: only a date that reads back the same is one.
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== s) throw new GatewayError('invalid_request', `${param} must be a date YYYY-MM-DD.`, { param });
  return t;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(v: Cell): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

type Encoder = (row: Cell[]) => string;

/** Encodes one row; `cost_micro_usd` goes into JSON as its exact digits (a JSON number of any size). */
function encoder(format: Query['format'], columns: readonly string[]): Encoder {
  if (format === 'csv') return (row) => `${row.map(csvField).join(',')}\r\n`;
  const money = columns.indexOf('cost_micro_usd');
  return (row) => `{${columns.map((c, i) => `${JSON.stringify(c)}:${i === money ? String(row[i]) : JSON.stringify(row[i])}`).join(',')}}\n`;
}

/** Resolves once the response can take more (or the client left); the database is read no faster than the client reads. */
async function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  if (!res.writableNeedDrain || signal.aborted) return;
  await Promise.race([once(res, 'drain'), once(signal, 'abort')]);
}

/**
 * Streams the export: the first page is read before the headers go out, so a database that fails
 * at once is an ordinary error reply; a failure later cuts the connection (a chunked reply without
 * its end), which every client reports, rather than ending a short file as if it were whole.
 */
async function stream(d: RouteDeps, q: Query, filter: ExportFilter, rc: { id: string; res: ServerResponse; signal: AbortSignal }): Promise<void> {
  const from = day(q.from, Date.now() - 29 * DAY, 'from');
  const to = day(q.to, Date.now(), 'to') + DAY;
  if (to <= from) throw new GatewayError('invalid_request', 'to must not be before from.', { param: 'to' });
  const granularity: Granularity = q.granularity;
  const columns = exportColumns[granularity];
  const encode = encoder(q.format, columns);
  const pages = granularity === 'request' ? requestRows(d.store, from, to, filter) : dailyRows(d.store, from, to, filter);
  let next = await pages.next();
  const name = `svc-usage-${new Date(from).toISOString().slice(0, 10)}-to-${new Date(to - DAY).toISOString().slice(0, 10)}-${granularity}.${q.format}`;
  rc.res.writeHead(200, {
    'content-type': q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/jsonl; charset=utf-8',
    'content-disposition': `attachment; filename="${name}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (q.format === 'csv') rc.res.write(`${columns.join(',')}\r\n`);
  let rows = 0;
  try {
    while (!next.done && !rc.signal.aborted) {
      let chunk = '';
      for (const row of next.value) chunk += encode(row);
      rows += next.value.length;
      rc.res.write(chunk);
      await drained(rc.res, rc.signal);
      if (rc.signal.aborted) break;
      next = await pages.next();
    }
  } catch (err) {
    d.log.error('spend.export_failed', { request_id: rc.id, rows, error_code: String((err as { code?: unknown }).code ?? 'error') });
    rc.res.destroy();
    return;
  } finally {
    await pages.return(undefined);
  }
  rc.res.end();
}

const response = Type.Unknown({ description: 'text/csv or application/jsonl, streamed; columns in plugins/budgets/README.md "Spend export"' });

/**
 * The spend export (issue 30 item 4): usage records of a period as CSV or JSON lines, one row per
 * request or per day, with the spend report's filters. Instance admins export everything;
 * workspace admins their workspace.
 */
export function exportRoutes(d: RouteDeps): void {
  const filterOf = (q: Query, workspaceId?: string): ExportFilter => ({
    workspace_id: workspaceId ?? q.workspace_id, person_id: q.person_id, key_id: q.key_id, provider: q.provider, model: q.model,
  });
  d.admin.route({
    method: 'GET', path: '/spend/export', summary: 'Export usage records of the whole instance as CSV or JSON lines (instance admins)', tag: 'budgets',
    access: 'instance-admin', query: Query, response,
    handler: async ({ query, rc }) => stream(d, query, filterOf(query), rc),
  });
  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/spend/export', summary: "Export one workspace's usage records as CSV or JSON lines (its admins)", tag: 'budgets',
    access: { workspace: 'admin', param: 'workspaceId' }, query: Type.Omit(Query, ['workspace_id']), response,
    handler: async ({ params, query, rc }) => stream(d, query as Query, filterOf(query as Query, params.workspaceId!), rc),
  });
}
