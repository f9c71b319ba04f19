import { GatewayError, Type, type AdminApi, type Store } from '../../kernel/index.js';
import type { RecordingSettings } from './settings.js';

const wsAdmin = { workspace: 'admin' as const, param: 'workspaceId' };
const Setting = Type.Object({ enabled: Type.Boolean(), days: Type.Integer({ minimum: 1, maximum: 90 }) });

interface SpanRow {
  span_id: string;
  name: string;
  start_us: number | string;
  duration_us: number | string;
  status: string;
  attributes: string;
}

/** Recording settings per workspace, and a request's trace with its recording (workspace admins). */
export function recordingRoutes(admin: AdminApi, store: Store, settings: RecordingSettings, flush: () => Promise<void>): void {
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/recording', summary: 'Whether prompts and replies are recorded, and for how many days',
    tag: 'recording', access: wsAdmin, response: Setting,
    handler: ({ params }) => settings.of(params.workspaceId!),
  });
  admin.route({
    method: 'PUT', path: '/workspaces/:workspaceId/recording', summary: 'Turn recording of prompts and replies on or off; days kept 1 to 90 (default 7)',
    tag: 'recording', access: wsAdmin,
    body: Type.Object({ enabled: Type.Boolean(), days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })) }, { additionalProperties: false }),
    response: Setting,
    async handler({ params, body }) {
      await settings.set(params.workspaceId!, body.enabled, body.days ?? settings.of(params.workspaceId!).days);
      return settings.of(params.workspaceId!);
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/requests/:requestId/trace',
    summary: "A request's trace: its spans and, where the workspace records them, its prompt and reply",
    tag: 'recording', access: wsAdmin,
    response: Type.Object({
      request_id: Type.String(),
      spans: Type.Array(Type.Object({ span_id: Type.String(), name: Type.String(), start_us: Type.Integer(), duration_us: Type.Integer(), status: Type.String(), attributes: Type.Record(Type.String(), Type.Unknown()) })),
      recording: Type.Union([Type.Object({ created_at: Type.String(), messages: Type.Array(Type.Unknown()), reply: Type.Union([Type.String(), Type.Null()]) }), Type.Null()]),
    }),
    async handler({ params }) {
      const ws = params.workspaceId!;
      await flush();
      const spans = (await store.execute<SpanRow>('select span_id, name, start_us, duration_us, status, attributes from spans where trace_id = ?', [params.requestId]))
        .map((r) => ({ span_id: r.span_id, name: r.name, start_us: Number(r.start_us), duration_us: Number(r.duration_us), status: r.status, attributes: JSON.parse(r.attributes) as Record<string, unknown> }))
        .filter((s) => s.attributes['svc.workspace_id'] === ws);
      const [rec] = await store.execute<{ created_at: number | string; messages: string; reply: string | null }>(
        'select created_at, messages, reply from recordings where request_id = ? and workspace_id = ?', [params.requestId, ws]);
      if (spans.length === 0 && !rec) throw new GatewayError('not_found', 'No such request in this workspace.');
      return {
        request_id: params.requestId!,
        spans,
        recording: rec ? { created_at: new Date(Number(rec.created_at)).toISOString(), messages: JSON.parse(rec.messages) as unknown[], reply: rec.reply } : null,
      };
    },
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/recordings',
    summary: 'Recorded requests of the workspace, newest first: id, time and the start of the last user message (its admins)',
    tag: 'recording', access: wsAdmin,
    query: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
      cursor: Type.Optional(Type.String({ pattern: '^[0-9]+_[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
    }),
    response: Type.Object({
      data: Type.Array(Type.Object({ request_id: Type.String(), created_at: Type.String(), preview: Type.String({ description: 'The last user message, up to 120 characters' }) })),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    }),
    async handler({ params, query }) {
      await flush();
      const limit = query.limit ?? 25;
      const where = ['workspace_id = ?'];
      const args: Array<string | number> = [params.workspaceId!];
      if (query.cursor) {
        const at = query.cursor.indexOf('_');
        const t = Number(query.cursor.slice(0, at));
        where.push('(created_at < ? or (created_at = ? and request_id < ?))');
        args.push(t, t, query.cursor.slice(at + 1));
      }
      const rows = await store.execute<{ request_id: string; created_at: number | string; messages: string }>(
        `select request_id, created_at, messages from recordings where ${where.join(' and ')} order by created_at desc, request_id desc limit ${limit + 1}`, args);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        data: page.map((r) => ({ request_id: r.request_id, created_at: new Date(Number(r.created_at)).toISOString(), preview: preview(r.messages) })),
        next_cursor: rows.length > limit && last ? `${Number(last.created_at)}_${last.request_id}` : null,
      };
    },
  });
}

/** The last user message's text (string or text parts), shortened, for the list. */
function preview(messages: string): string {
  const list = JSON.parse(messages) as Array<{ role?: string; content?: unknown }>;
  const user = [...list].reverse().find((m) => m.role === 'user');
  const c = user?.content;
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : `[${p.type ?? 'part'}]`)).join(' ') : '';
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
