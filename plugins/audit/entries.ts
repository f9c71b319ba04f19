import { orderedId, type AuditEntryInput, type AuditLog, type AuditValue, type Logger, type Store } from '../../kernel/index.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'audit.write_failed': { action: string; request_id: string | null; error_code: string };
  }
}

/** An entry as the admin API lists it. */
export interface AuditEntry extends Omit<AuditEntryInput, 'route'> {
  id: string;
  created_at: string;
  route: string | null;
}

export interface AuditFilter {
  since?: string;
  until?: string;
  action?: string;
  outcome?: 'success' | 'failure';
  actor_id?: string;
  resource_type?: string;
  resource_id?: string;
  workspace_id?: string;
  client_address?: string;
  cursor?: string;
  limit?: number;
}

type Row = Record<string, string | number | null>;
const str = (v: string | number | null | undefined): string | null => (v === null || v === undefined ? null : String(v));

const columns = ['id', 'created_at', 'action', 'outcome', 'actor_id', 'actor_via', 'actor_key_id', 'client_address', 'request_id', 'route', 'resource_type', 'resource_id', 'workspace_id', 'fields', 'field_values', 'error_code'];
const insertSql = `insert into audit_entries (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`;

/** Cuts a value to its column's width (ids and routes are short; this only guards odd input). */
const cut = (v: string | null, n: number) => (v === null ? null : v.slice(0, n));

function view(r: Row): AuditEntry {
  return {
    id: String(r.id),
    created_at: new Date(Number(r.created_at)).toISOString(),
    action: String(r.action),
    outcome: r.outcome === 'failure' ? 'failure' : 'success',
    actor_id: str(r.actor_id),
    actor_via: r.actor_via === 'key' ? 'key' : r.actor_via === 'session' ? 'session' : null,
    actor_key_id: str(r.actor_key_id),
    client_address: str(r.client_address),
    request_id: str(r.request_id),
    route: str(r.route),
    resource_type: String(r.resource_type),
    resource_id: str(r.resource_id),
    workspace_id: str(r.workspace_id),
    fields: JSON.parse(String(r.fields)) as string[],
    values: JSON.parse(String(r.field_values)) as Record<string, AuditValue>,
    error_code: str(r.error_code),
  };
}

/** The audit log in the `audit_entries` table: appended to, listed, never changed. */
export class AuditEntries implements AuditLog {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  async record(e: AuditEntryInput, now = Date.now()): Promise<void> {
    const row = [
      orderedId('aud_', 9, now), now, cut(e.action, 100), e.outcome, cut(e.actor_id, 40), e.actor_via, cut(e.actor_key_id, 40), cut(e.client_address, 64),
      cut(e.request_id, 64), cut(e.route ?? null, 300), cut(e.resource_type, 64), cut(e.resource_id, 200), cut(e.workspace_id, 40),
      JSON.stringify(e.fields), JSON.stringify(e.values), cut(e.error_code, 64),
    ];
    try {
      await this.store.execute(insertSql, row);
    } catch (err) {
      // The change itself is done and answered; the missing entry is on record in the log instead.
      this.log.error('audit.write_failed', { action: e.action, request_id: e.request_id, error_code: (err as { code?: string }).code ?? 'error' });
    }
  }

  /** Newest first; keyset paging on (created_at, id). */
  async list(f: AuditFilter): Promise<{ data: AuditEntry[]; next_cursor: string | null }> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    const exact = { action: f.action, outcome: f.outcome, actor_id: f.actor_id, resource_type: f.resource_type, resource_id: f.resource_id, workspace_id: f.workspace_id, client_address: f.client_address };
    for (const [column, value] of Object.entries(exact)) {
      if (value === undefined || value === '') continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    if (f.since) {
      where.push('created_at >= ?');
      params.push(Date.parse(f.since));
    }
    if (f.until) {
      where.push('created_at < ?');
      params.push(Date.parse(f.until));
    }
    if (f.cursor) {
      const at = f.cursor.indexOf('_');
      const t = Number(f.cursor.slice(0, at));
      where.push('(created_at < ? or (created_at = ? and id < ?))');
      params.push(t, t, f.cursor.slice(at + 1));
    }
    const limit = f.limit ?? 50;
    const rows = await this.store.execute<Row>(`select * from audit_entries ${where.length ? `where ${where.join(' and ')}` : ''} order by created_at desc, id desc limit ${limit + 1}`, params);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { data: page.map(view), next_cursor: rows.length > limit && last ? `${Number(last.created_at)}_${String(last.id)}` : null };
  }
}
