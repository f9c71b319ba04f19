import { GatewayError, type CatalogModel, type CatalogService } from '../../kernel/index.js';
import { isPriced } from './select.js';

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  svc: Record<string, unknown>;
}

function entry(m: CatalogModel): ModelEntry {
  return {
    id: m.name,
    object: 'model',
    created: Math.floor(m.createdAt.getTime() / 1000),
    owned_by: m.provider,
    svc: {
      display_name: m.displayName,
      context_window: m.contextWindow,
      output_limit: m.outputLimit,
      capabilities: { images: m.canReadImages, pdf: m.canReadPdf, tools: m.canCallTools },
      prices: { input_micro_usd_per_mtok: m.inputMicroUsdPerMTok, output_micro_usd_per_mtok: m.outputMicroUsdPerMTok },
    },
  };
}

/**
 * GET /v1/models in the spec's order: `auto`, then `route/<name>` per enabled route (from the
 * routing plugin, when present), then every priced model whose provider is configured.
 */
export function listModels(catalog: CatalogService, routes: Array<{ name: string; description?: string }>, workspaceId?: string): { object: 'list'; data: ModelEntry[] } {
  const data: ModelEntry[] = [{ id: 'auto', object: 'model', created: 0, owned_by: 'svc', svc: { display_name: 'Auto (workspace routing)' } }];
  for (const r of routes) data.push({ id: `route/${r.name}`, object: 'model', created: 0, owned_by: 'svc', svc: { display_name: r.name, description: r.description ?? '' } });
  for (const m of catalog.models()) {
    // A built-in provider counts only with a key for this workspace (its own or the instance's).
    if (!isPriced(m) || !catalog.configured(m.provider, workspaceId)) continue;
    data.push(entry(m));
  }
  return { object: 'list', data };
}

const prefix = '/v1/models/';

/**
 * GET /v1/models/{id}: one entry of the list above, found by the id in the rest of the path
 * (percent-decoded, query dropped); 404 model_not_found when the caller could not use it.
 */
export function findModel(catalog: CatalogService, routes: Array<{ name: string; description?: string }>, url: string, workspaceId?: string): ModelEntry {
  const path = url.split('?')[0]!.slice(prefix.length);
  let id: string;
  try {
    id = decodeURIComponent(path);
  } catch {
    id = path;
  }
  const found = listModels(catalog, routes, workspaceId).data.find((m) => m.id === id);
  if (!found) throw new GatewayError('model_not_found', `The model ${JSON.stringify(id)} does not exist or cannot be used.`, { param: 'model' });
  return found;
}
