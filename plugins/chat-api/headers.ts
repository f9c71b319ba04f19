import type { CatalogModel, RequestContext } from '../../kernel/index.js';

/** The x-svc-* headers of a reply (SPEC.md Response headers); `model` is the one that answers. */
export function replyHeaders(ctx: RequestContext, model: CatalogModel): Record<string, string> {
  const h: Record<string, string> = { ...ctx.headers, 'x-svc-model': model.name };
  const sel = ctx.state.selection;
  if (sel) {
    h['x-svc-routing-rule'] = sel.rule;
    if (sel.route) h['x-svc-route'] = sel.route;
    if (sel.reason) h['x-svc-routing-reason'] = sel.reason;
    if (sel.confidence !== undefined) h['x-svc-routing-confidence'] = sel.confidence.toFixed(2);
  }
  if (ctx.state.fallbackFrom) {
    h['x-svc-fallback-from'] = ctx.state.fallbackFrom.model;
    h['x-svc-fallback-scope'] = ctx.state.fallbackFrom.scope;
  }
  return h;
}
