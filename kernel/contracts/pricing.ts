import { defineToken } from '../container/tokens.js';
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

/** A model call of a request that produced output: its model and the usage it is charged for. */
export interface ChargedCall {
  model: Pick<CatalogModel, 'name' | 'inputMicroUsdPerMTok' | 'outputMicroUsdPerMTok'>;
  usage: Usage;
}

/**
 * What a request is charged: each model call it made at its own model's prices, each rounded up
 * as a request of its own would be (a tool loop makes several calls; a retry may have moved to a
 * fallback model between them). Settle (budgets) and the usage record (tracing) both use this, so
 * running totals equal the sum of usage records.
 *
 * @example
 * requestChargeMicroUsd([{ model, usage: first }, { model, usage: second }])
 */
export function requestChargeMicroUsd(calls: readonly ChargedCall[]): number {
  let total = 0;
  for (const c of calls) total += chargeMicroUsd(c.model, c.usage);
  return total;
}

/**
 * The token counts of several model calls added up (details included), or null when there were
 * none: the usage a tool loop's reply reports and its usage record carries.
 *
 * @example
 * sumUsage(outcome.modelCalls ?? [])?.total_tokens
 */
export function sumUsage(calls: readonly Pick<ChargedCall, 'usage'>[]): Usage | null {
  if (calls.length === 0) return null;
  const total: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let cached = 0;
  let reasoning = 0;
  for (const { usage: u } of calls) {
    total.prompt_tokens += u.prompt_tokens;
    total.completion_tokens += u.completion_tokens;
    total.total_tokens += u.total_tokens;
    cached += u.prompt_tokens_details?.cached_tokens ?? 0;
    reasoning += u.completion_tokens_details?.reasoning_tokens ?? 0;
  }
  if (cached) total.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning) total.completion_tokens_details = { reasoning_tokens: reasoning };
  return total;
}

/**
 * The budget holds this replica has reserved and not yet settled: how many and their sum in
 * micro-USD (the budgets plugin provides it; metrics reads it at each scrape).
 *
 * @example
 * ctx.optional(HoldsInFlightToken)?.().microUsd
 */
export const HoldsInFlightToken = defineToken<() => { holds: number; microUsd: number }>('budgets.holds-in-flight');
