import { GatewayError, type CatalogModel, type RequestContext, type TokenCounter } from '../../kernel/index.js';

/** True when `model` certainly cannot hold the request: the input's certain lower bound (no margin) plus the output limit sent. */
export function tooLong(model: CatalogModel, inputTokens: number, maxTokens: number): boolean {
  return model.contextWindow > 0 && inputTokens + maxTokens > model.contextWindow;
}

export function contextError(model: CatalogModel, inputTokens: number, maxTokens: number): GatewayError {
  return new GatewayError(
    'context_length_exceeded',
    `The messages (at least ${inputTokens} tokens) plus the output limit (${maxTokens}) are more than the context window of ${model.name} (${model.contextWindow}); nothing was sent.`,
    { param: 'messages' },
  );
}

/**
 * The capabilities phase, after the capability rule (README "When the upstream fails"): candidates
 * whose context window certainly cannot hold the request are dropped before the hold is priced, so
 * the hold is made for a model that can answer. When none is left (an explicit model always), 400
 * `context_length_exceeded` without an upstream call. Only a certain overflow is refused: the
 * measure's lower bound has no margin and counts a text too long to tokenize at one token per 128
 * bytes, so a request near the limit is sent and the provider decides.
 */
export function fitContext(ctx: RequestContext, counter: TokenCounter): void {
  const { chat, candidates } = ctx.state;
  if (!chat || candidates.length === 0) return;
  const input = counter.measure(chat, ctx.state.needs).lower;
  // Most requests drop none: the list itself then, not a copy.
  const fits = (m: CatalogModel): boolean => !tooLong(m, input, chat.maxTokens ?? m.outputLimit);
  const fit = candidates.every(fits) ? candidates : candidates.filter(fits);
  if (fit.length === 0) {
    const first = candidates[0]!;
    throw contextError(first, input, chat.maxTokens ?? first.outputLimit);
  }
  ctx.state.candidates = fit;
}
