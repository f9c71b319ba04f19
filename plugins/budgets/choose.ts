import type { CatalogModel, CatalogService, RequestNeeds } from '../../kernel/index.js';

/** A model the request may be sent to: priced, its provider present, able to read what it carries. */
export function eligible(m: CatalogModel, needs: RequestNeeds | undefined, maxTokens: number | undefined, catalog: CatalogService): boolean {
  if (m.inputMicroUsdPerMTok === null || m.outputMicroUsdPerMTok === null) return false;
  if (!catalog.provider(m.provider)) return false;
  if (maxTokens !== undefined && maxTokens > m.outputLimit) return false;
  if (!needs) return true;
  return (needs.images === 0 || m.canReadImages) && (needs.pdfs === 0 || m.canReadPdf) && (!needs.tools || m.canCallTools);
}

/**
 * The models a request may be held for, in order (README "Cheaper model"): the chosen model, the
 * other candidates in their order (the route's fallbacks, already filtered by capabilities), then
 * the workspace's budget fallback model when it is eligible and not among them.
 */
export function holdChain(
  chosen: CatalogModel,
  candidates: CatalogModel[],
  fallbackName: string | undefined,
  needs: RequestNeeds | undefined,
  maxTokens: number | undefined,
  catalog: CatalogService,
): CatalogModel[] {
  // An explicit model without a budget fallback (most requests): its one-model list, read only.
  if (!fallbackName && candidates.length === 1 && candidates[0] === chosen) return candidates;
  const chain = [chosen, ...candidates.filter((m) => m.name !== chosen.name)];
  const fallback = fallbackName ? catalog.model(fallbackName) : undefined;
  if (fallback && !chain.some((m) => m.name === fallback.name) && eligible(fallback, needs, maxTokens, catalog)) chain.push(fallback);
  return chain;
}
