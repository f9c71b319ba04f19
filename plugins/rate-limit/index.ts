import { CacheToken, definePlugin, GatewayError, Type, withItem, type CachePort, type Compensation, type PendingReservation, type RequestContext, type ReserveLine } from '../../kernel/index.js';
import { rateLimited, rateLine, retryAfter, windowEndOf, type Allowance } from './window.js';

const owner = 'rate-limit';

/**
 * Reserves what `admit` left pending when no budgets plugin took it in its single reservation:
 * one cache round trip for the rate lines alone. Fails closed (503 budget_unavailable).
 * Synchronous (no promise) when budgets took them, as it does on most requests.
 */
function reservePending(ctx: RequestContext, cache: CachePort): void | Promise<Compensation> {
  const all = ctx.state.reservations;
  if (all === undefined || !all.some((r) => r.owner === owner)) return;
  return reserve(ctx, all, cache);
}

async function reserve(ctx: RequestContext, all: PendingReservation[], cache: CachePort): Promise<Compensation> {
  const pending = all.filter((r) => r.owner === owner);
  ctx.state.reservations = all.filter((r) => r.owner !== owner);
  const lines = pending.map((p) => p.line);
  let result;
  try {
    result = await cache.reserve(lines);
  } catch (err) {
    throw new GatewayError('budget_unavailable', 'The rate limit cannot be checked right now; nothing was sent. Retry shortly.', { cause: err });
  }
  if (!result.ok) throw pending[result.index]!.refusal(result.current, result.ttlMs);
  return async () => {
    await cache.adjust(lines.map((l) => ({ key: l.key, delta: -l.amount })));
  };
}

/** A request's pending rate line; its refusal is a method, not a closure made for every request. */
class RatePending implements PendingReservation {
  readonly owner = owner;
  constructor(
    readonly line: ReserveLine,
    private readonly at: number,
    private readonly allowance: Allowance,
  ) {}

  refusal(_current: number, ttlMs: number): Error {
    return rateLimited(retryAfter(ttlMs, windowEndOf(this.at, this.allowance), Date.now()), this.allowance);
  }
}

/**
 * The per-person rate limit (SPEC.md Limits): all keys of a person and their own chat share one
 * allowance across workspaces; it counts started model requests, also to models priced 0.00.
 * `admit` only asks for a counter line; the budgets `hold` hook reserves it together with the
 * budget hold in one cache round trip, or this plugin's own `hold` hook does when budgets is off.
 */
export default definePlugin({
  name: owner,
  config: Type.Object(
    {
      /** Model requests one person may start per window. */
      requests: Type.Integer({ minimum: 1, default: 300 }),
      /** Length of the fixed window. */
      windowSeconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 60 }),
    },
    { additionalProperties: false, default: {} },
  ),
  register(ctx) {
    const cache = ctx.use(CacheToken);
    const allowance: Allowance = { requests: ctx.config.requests, windowMs: ctx.config.windowSeconds * 1000 };
    ctx.hook('admit', (rc) => {
      const person = rc.state.principal?.personId;
      if (!person) return;
      const now = Date.now();
      rc.state.reservations = withItem(rc.state.reservations, new RatePending(rateLine(person, allowance, now), now, allowance));
    });
    ctx.hook('hold', (rc) => reservePending(rc, cache));
  },
});
