import { GatewayError, type CatalogModel, type CatalogService, type RequestContext } from '../../kernel/index.js';

/** A client-chosen name as echoed in an error message: never more than 200 characters of it. */
function shown(name: string): string {
  return name.length > 200 ? `${name.slice(0, 200)}…` : name;
}

/** `<provider>:<model>`: split at the first colon; the id keeps its own colons and slashes. */
export function isExplicit(model: string): boolean {
  return !model.startsWith('route/') && model !== 'auto' && model.indexOf(':') > 0;
}

/** A model can be called only when it has both prices (SPEC.md: never called without a price). */
export function isPriced(m: CatalogModel): boolean {
  return m.inputMicroUsdPerMTok !== null && m.outputMicroUsdPerMTok !== null;
}

/** What an explicit model's requests all share (frozen: the phases replace these, never change them). */
const explicitSelection: NonNullable<RequestContext['state']['selection']> = Object.freeze({ rule: 'explicit' });
const alone = new WeakMap<CatalogModel, CatalogModel[]>();
function aloneOf(model: CatalogModel): CatalogModel[] {
  let list = alone.get(model);
  if (list === undefined) alone.set(model, (list = Object.freeze([model]) as CatalogModel[]));
  return list;
}

/**
 * The select phase for explicit models. `auto` and `route/<name>` are left to the routing plugin;
 * if nothing chose by the capabilities phase, that phase refuses.
 */
export function selectExplicit(ctx: RequestContext, catalog: CatalogService): void {
  const name = ctx.state.chat!.model;
  if (!isExplicit(name) || ctx.state.candidates.length > 0) return;
  // SPEC.md Errors: provider_not_configured also when the provider part matches no provider, and
  // when a built-in vendor has no key (the same rule that keeps its models off GET /v1/models).
  const providerName = name.slice(0, name.indexOf(':'));
  if (!catalog.configured(providerName, ctx.state.principal?.workspaceId)) {
    throw new GatewayError('provider_not_configured', `The provider ${shown(providerName)} of model ${shown(name)} is not configured.`, { param: 'model' });
  }
  const model = catalog.model(name);
  if (!model || !isPriced(model)) {
    throw new GatewayError('model_not_found', `The model ${shown(name)} does not exist or has no price.`, { param: 'model' });
  }
  ctx.state.candidates = aloneOf(model);
  ctx.state.selection = explicitSelection;
}

/** Whether `m` can read the request's attachments and call its tools. */
function canServe(m: CatalogModel, needs: NonNullable<RequestContext['state']['needs']>): boolean {
  return (needs.images === 0 || m.canReadImages) && (needs.pdfs === 0 || m.canReadPdf) && (!needs.tools || m.canCallTools);
}

/**
 * The capabilities phase: drop candidates that cannot read the attachments or call tools
 * (SPEC.md Capability rule), and check the output limit against the model that will answer.
 */
export function checkCapabilities(ctx: RequestContext): void {
  const { chat, needs, candidates } = ctx.state;
  if (candidates.length === 0) {
    if (chat!.model === 'auto') throw new GatewayError('no_model', 'Nothing chose a model and the workspace has no default.', { param: 'model' });
    throw new GatewayError('model_not_found', `No model or route named ${shown(chat!.model)}.`, { param: 'model' });
  }
  // Most requests drop none: the list itself then, not a copy.
  const able = candidates.every((m) => canServe(m, needs!)) ? candidates : candidates.filter((m) => canServe(m, needs!));
  if (able.length === 0) {
    const first = candidates[0]!;
    const what =
      needs!.images > 0 && !first.canReadImages ? 'read the attached images' : needs!.pdfs > 0 && !first.canReadPdf ? 'read the attached PDF files' : 'call tools';
    throw new GatewayError('unsupported_input', `The model ${first.name} cannot ${what}.`, { param: needs!.tools && what === 'call tools' ? 'tools' : 'messages' });
  }
  const max = chat!.maxTokens;
  if (max !== undefined && max > able[0]!.outputLimit) {
    const field = chat!.maxTokensField ?? 'max_tokens';
    throw new GatewayError('output_too_long', `${field} ${max} is above the output limit of ${able[0]!.name} (${able[0]!.outputLimit}).`, { param: field });
  }
  ctx.state.candidates = able;
}
