import type { Store } from '../../kernel/index.js';

export const changeChannel = 'routing.changed';

export interface Route {
  workspaceId: string;
  name: string;
  model: string;
  fallbacks: string[];
  description: string;
  examples: string[];
  enabled: boolean;
  confidenceThreshold: number | null;
  margin: number | null;
  minChars: number | null;
  /** Changes whenever the texts the classifier reads change. */
  version: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceRouting {
  defaultModel: string | null;
  pinnedModel: string | null;
  routingEnabled: boolean;
  codeRoute: string | null;
}

/** What the request path reads, per workspace, in memory. */
export interface Snapshot {
  /** Workspace id → its routes in name order. */
  routes: Map<string, Route[]>;
  settings: Map<string, WorkspaceRouting>;
}

export const noSettings: WorkspaceRouting = { defaultModel: null, pinnedModel: null, routingEnabled: true, codeRoute: null };

interface RouteRow {
  workspace_id: string; name: string; model: string; fallbacks: string; description: string; examples: string; enabled: number | string;
  confidence_threshold: number | string | null; margin: number | string | null; min_chars: number | string | null; version: string;
  created_at: number | string; updated_at: number | string;
}
interface SettingRow { workspace_id: string; default_model: string | null; pinned_model: string | null; routing_enabled: number | string; code_route: string | null }

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function routeFromRow(r: RouteRow): Route {
  return {
    workspaceId: r.workspace_id,
    name: r.name,
    model: r.model,
    fallbacks: JSON.parse(r.fallbacks) as string[],
    description: r.description,
    examples: JSON.parse(r.examples) as string[],
    enabled: Number(r.enabled) === 1,
    confidenceThreshold: num(r.confidence_threshold),
    margin: num(r.margin),
    minChars: num(r.min_chars),
    version: r.version,
    createdAt: new Date(Number(r.created_at)),
    updatedAt: new Date(Number(r.updated_at)),
  };
}

export async function loadSnapshot(store: Store): Promise<Snapshot> {
  const routes = new Map<string, Route[]>();
  for (const row of await store.execute<RouteRow>('select * from routing_routes order by workspace_id, name')) {
    const r = routeFromRow(row);
    const list = routes.get(r.workspaceId) ?? [];
    list.push(r);
    routes.set(r.workspaceId, list);
  }
  const settings = new Map<string, WorkspaceRouting>();
  for (const s of await store.execute<SettingRow>('select * from routing_settings')) {
    settings.set(s.workspace_id, { defaultModel: s.default_model, pinnedModel: s.pinned_model, routingEnabled: Number(s.routing_enabled) === 1, codeRoute: s.code_route });
  }
  return { routes, settings };
}

export function emptySnapshot(): Snapshot {
  return { routes: new Map(), settings: new Map() };
}
