import type { CatalogModel } from './catalog.js';
import type { Usage } from './chat.js';

/**
 * The charge for a reply in integer micro-USD, rounded up (SPEC.md Pricing rules): cached input
 * at the input price (it is part of prompt_tokens), reasoning tokens as output (part of
 * completion_tokens). Prices are micro-USD per million tokens, so the product is divided once.
 *
 * @example
 * chargeMicroUsd({ inputMicroUsdPerMTok: 2_500_000, outputMicroUsdPerMTok: 10_000_000 }, usage)
 */
export function chargeMicroUsd(model: Pick<CatalogModel, 'inputMicroUsdPerMTok' | 'outputMicroUsdPerMTok'>, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): number {
  const inPrice = BigInt(model.inputMicroUsdPerMTok ?? 0);
  const outPrice = BigInt(model.outputMicroUsdPerMTok ?? 0);
  const total = BigInt(Math.max(0, usage.prompt_tokens)) * inPrice + BigInt(Math.max(0, usage.completion_tokens)) * outPrice;
  return Number((total + 999_999n) / 1_000_000n);
}
