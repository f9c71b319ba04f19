import { defineToken } from '../container/tokens.js';

/** A field's value as an audit entry may keep it: never free text (which may be a secret or a prompt). */
export type AuditValue = boolean | number | null | string;

/**
 * One administrative action for the audit log (issue 30). Every change through the admin API is
 * recorded by admin-api itself (plugins/admin-api/audit.ts); other plugins record actions taken
 * elsewhere (a tool approved "always" in a conversation) through `AuditToken`.
 *
 * Holds ids, names of fields and only values that cannot carry a secret or a prompt: booleans,
 * numbers, null and the fixed words of an enumeration (roles, states). Never e-mails typed at
 * sign-in, passwords, keys, tokens, URLs or any other free text.
 *
 * @example
 * await ctx.optional(AuditToken)?.record({
 *   action: 'tool_approval.always', outcome: 'success', actor_id: p.personId, actor_via: 'session',
 *   actor_key_id: null, client_address: null, request_id: rc.id, resource_type: 'tool_grant',
 *   resource_id: `${serverId}/${tool}`, workspace_id: p.workspaceId, fields: [], values: {}, error_code: null,
 * });
 */
export interface AuditEntryInput {
  /** What was done, `<resource>.<verb>` such as `keys.create`, `session.sign_in`, `budget-caps.update`. */
  action: string;
  outcome: 'success' | 'failure';
  /** The person acting (for a sign-in: the person signing in, when the e-mail is known). */
  actor_id: string | null;
  actor_via: 'session' | 'key' | null;
  actor_key_id: string | null;
  /** The client's address (kernel/http/client-address.ts). */
  client_address: string | null;
  request_id: string | null;
  /** The route (`PATCH /persons/:personId`), or where else the action came from (`POST /v1/chat/completions`). */
  route?: string | null;
  resource_type: string;
  resource_id: string | null;
  workspace_id: string | null;
  /** Every field the request set, as dotted paths (`periods.spans`); values of secrets are never kept. */
  fields: string[];
  /** The values of those fields that are safe to keep (see above). */
  values: Record<string, AuditValue>;
  /** For a failure: the error code answered. */
  error_code: string | null;
}

/** The audit log: append-only; entries leave only through the retention job (13 months by default). */
export interface AuditLog {
  /** Appends one entry; never throws (a failure is logged as `audit.write_failed`). */
  record(entry: AuditEntryInput): Promise<void>;
}

export const AuditToken = defineToken<AuditLog>('audit.log');
