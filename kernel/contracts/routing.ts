import { defineToken } from '../container/tokens.js';

/** A route as GET /v1/models lists it. */
export interface ListedRoute {
  name: string;
  description: string;
}

/**
 * What the routing plugin shares with the model API: the enabled routes of a workspace, in name
 * order, from its in-memory snapshot (no database round trip). Absent when routing is disabled.
 *
 * @example
 * const routes = ctx.optional(RoutesToken)?.enabledRoutes(principal.workspaceId) ?? [];
 */
export interface RoutesDirectory {
  enabledRoutes(workspaceId: string): ListedRoute[];
}

export const RoutesToken = defineToken<RoutesDirectory>('routing.routes');
