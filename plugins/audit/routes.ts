import { GatewayError, Type, type AdminApi, type Static } from '../../kernel/index.js';
import type { AuditEntries } from './entries.js';

const tag = 'audit';
const text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const EntryView = Type.Object({
  id: Type.String(),
  created_at: Type.String({ description: 'ISO 8601' }),
  action: Type.String({ description: '`<resource>.<verb>`, e.g. `keys.create`, `session.sign_in`, `tool_approval.always`' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  actor_id: text('The person acting (for a sign-in: the person signing in, when the e-mail is known)'),
  actor_via: Type.Union([Type.Literal('session'), Type.Literal('key'), Type.Null()]),
  actor_key_id: text('The API key acting, if any'),
  client_address: text('The client address (server.trustedProxies decides whether X-Forwarded-For counts)'),
  request_id: text('x-svc-request-id of the request'),
  route: text('Method and route template, e.g. `PATCH /persons/:personId`'),
  resource_type: Type.String(),
  resource_id: text('What was acted on'),
  workspace_id: text('The workspace, when the action belongs to one'),
  fields: Type.Array(Type.String(), { description: 'Every field the request set (dotted paths)' }),
  values: Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.Number(), Type.String(), Type.Null()]), {
    description: 'Values safe to keep: booleans, numbers, null and fixed words such as roles; never free text, secrets or prompts',
  }),
  error_code: text('For a failure: the error code answered'),
});

const iso = (description: string) => Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T', description }));
const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]+_[A-Za-z0-9_-]+$', description: 'next_cursor of the previous page' })),
  since: iso('Entries at or after this time'),
  until: iso('Entries before this time'),
  action: Type.Optional(Type.String({ maxLength: 100 })),
  outcome: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
  actor_id: Type.Optional(Type.String({ maxLength: 40 })),
  resource_type: Type.Optional(Type.String({ maxLength: 64 })),
  resource_id: Type.Optional(Type.String({ maxLength: 200 })),
  workspace_id: Type.Optional(Type.String({ maxLength: 40 })),
  client_address: Type.Optional(Type.String({ maxLength: 64 })),
});
type ListQuery = Static<typeof ListQuery>;

const Page = Type.Object({ data: Type.Array(EntryView), next_cursor: Type.Union([Type.String(), Type.Null()]) });

function checked(q: ListQuery): ListQuery {
  for (const p of ['since', 'until'] as const) {
    if (q[p] !== undefined && Number.isNaN(Date.parse(q[p]!))) throw new GatewayError('invalid_request', `${p}: not an ISO 8601 time.`, { param: p });
  }
  return q;
}

/**
 * Listing the audit log: instance admins see every entry; workspace admins the entries of their
 * workspace. There is no route that changes or deletes an entry.
 */
export function auditRoutes(admin: AdminApi, entries: AuditEntries): void {
  admin.route({
    method: 'GET', path: '/audit-entries', summary: 'The audit log, newest first, with filters (instance admins)', tag, access: 'instance-admin',
    query: ListQuery, response: Page,
    handler: ({ query }) => entries.list(checked(query)),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/audit-entries', summary: "The audit log of one workspace, newest first (its admins)", tag,
    access: { workspace: 'admin', param: 'workspaceId' }, query: ListQuery, response: Page,
    handler: ({ query, params }) => entries.list({ ...checked(query), workspace_id: params.workspaceId! }),
  });
}
