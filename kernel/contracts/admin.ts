import type { Static, TSchema } from '@sinclair/typebox';
import { defineToken } from '../container/tokens.js';
import type { RouteContext } from '../http/route.js';
import type { Caller } from './identity.js';

/**
 * Who may call an admin route:
 * - `public`: anyone (sign-in);
 * - `person`: any signed-in caller;
 * - `instance-admin`: instance admins only;
 * - `{ workspace: 'member' | 'admin', param }`: members (or admins) of the workspace named by the
 *   path parameter `param`; instance admins pass too. Anything else is 403 forbidden, and a
 *   workspace the caller cannot see is 404 not_found.
 */
export type AdminAccess = 'public' | 'person' | 'instance-admin' | { workspace: 'member' | 'admin'; param: string };

/** What a handler may add to its audit entry where the request alone does not tell (a sign-in's person). */
export interface AuditNote {
  actor_id?: string | null;
  resource_id?: string | null;
  workspace_id?: string | null;
  /** The request failed with this code although the handler answered itself (a refusal page). */
  error_code?: string;
}

export interface AdminInput<B extends TSchema, Q extends TSchema> {
  caller: Caller | null;
  params: Record<string, string>;
  body: Static<B>;
  query: Static<Q>;
  rc: RouteContext;
  /** Adds to this request's audit entry (plugins/admin-api/audit.ts); later calls override earlier ones. */
  note(extra: AuditNote): void;
}

/**
 * How a route is audited. By default every successful change (any method but GET) is recorded,
 * its action named `<resource>.<verb>` after the path and method. `action` names it instead;
 * `attempts` records failures too (sign-in, password reset); `false` records nothing.
 */
export type AdminAudit = false | { action?: string; attempts?: boolean };

/** One admin endpoint: its schemas validate the request and make the OpenAPI document. */
export interface AdminRouteDef<B extends TSchema = TSchema, Q extends TSchema = TSchema, R extends TSchema = TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /admin/v1, tinyhttp style: `/workspaces/:workspaceId/keys`. */
  path: string;
  summary: string;
  tag: string;
  access: AdminAccess;
  body?: B;
  query?: Q;
  response: R;
  /** Success status; 200 by default (201 for creations, 204 writes no body). */
  status?: 200 | 201 | 204;
  audit?: AdminAudit;
  handler(input: AdminInput<B, Q>): Promise<Static<R>> | Static<R>;
}

/**
 * The admin API registry: validates input against the route's typebox schemas (400
 * invalid_request naming `param`), checks access, renders errors in the spec's shape, and serves
 * the OpenAPI 3.1 document at /admin/v1/openapi.json.
 *
 * @example
 * admin.route({ method: 'GET', path: '/providers', summary: 'List providers', tag: 'catalog',
 *   access: 'instance-admin', response: Type.Object({ data: Type.Array(ProviderView) }),
 *   handler: () => ({ data: catalog.providers().map(view) }) });
 */
export interface AdminApi {
  route<B extends TSchema, Q extends TSchema, R extends TSchema>(def: AdminRouteDef<B, Q, R>): void;
}

export const AdminApiToken = defineToken<AdminApi>('admin-api.registry');
