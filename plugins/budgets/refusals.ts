import { GatewayError, type Dependencies } from '../../kernel/index.js';
import type { Scope } from './caps.js';
import type { BudgetsConfig } from './config.js';
import type { Totals } from './totals.js';

/** The cap that refused: its scope, its room left, and what was needed (SPEC.md Errors, budget_exceeded). */
export interface Refusal { scope: Scope; remaining: number; required: number }

export const unavailable = (cause?: unknown): GatewayError =>
  new GatewayError('budget_unavailable', 'Budgets or the rate limit cannot be checked right now; nothing was sent. Retry shortly.', { cause });

/** 402 budget_exceeded with the spec's `svc` fields; `what` says what found no room. */
export function exceeded(r: Refusal, what = 'this request, even on a cheaper model; nothing was sent'): GatewayError {
  return new GatewayError('budget_exceeded', `The ${r.scope} budget has no room for ${what}.`, {
    details: { scope: r.scope, remaining_micro_usd: r.remaining, required_micro_usd: r.required },
  });
}

/**
 * Fail closed (README "Fail closed"): while the cache, or the database when `failClosedOnDatabase`,
 * does not answer, nothing is reserved and nothing is sent.
 */
export function refuseWhileDown(dependencies: Dependencies, totals: Totals, config: BudgetsConfig): void {
  const down = dependencies.firstDown();
  if (down && (down.name === 'cache' || config.failClosedOnDatabase)) throw unavailable();
  if (config.failClosedOnDatabase && totals.down) throw unavailable();
}
