import { chargeMicroUsd, type CatalogModel } from '../../kernel/index.js';

type Priced = Pick<CatalogModel, 'inputMicroUsdPerMTok' | 'outputMicroUsdPerMTok' | 'contextWindow' | 'outputLimit'>;

/** SPEC.md Pricing rule 7: a model priced 0.00 is never held against a budget. */
export function isFree(m: Pick<CatalogModel, 'inputMicroUsdPerMTok' | 'outputMicroUsdPerMTok'>): boolean {
  return m.inputMicroUsdPerMTok === 0 && m.outputMicroUsdPerMTok === 0;
}

/**
 * The hold of a request on a model, in integer micro-USD rounded up: the input bound (capped by the
 * model's context window: a provider bills no more prompt than the model takes) at the input
 * price, plus the output limit (the request's max tokens, or the model's) at the output price.
 * It uses the same formula as the final charge, so a charge whose token counts stay within the
 * bound never exceeds the hold.
 *
 * @example
 * holdMicroUsd(model, 1200, undefined) // 1200 input tokens + model.outputLimit output tokens
 */
export function holdMicroUsd(m: Priced, inputTokens: number, maxTokens: number | undefined): number {
  if (isFree(m)) return 0;
  const prompt = m.contextWindow > 0 ? Math.min(inputTokens, m.contextWindow) : inputTokens;
  return chargeMicroUsd(m, { prompt_tokens: prompt, completion_tokens: maxTokens ?? m.outputLimit });
}
