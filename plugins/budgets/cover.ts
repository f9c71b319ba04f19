import { requestChargeMicroUsd, type HoldRecord, type RequestContext } from '../../kernel/index.js';
import { applicableCaps } from './caps.js';
import { holdMicroUsd } from './hold-amount.js';
import type { HoldDeps } from './holds.js';
import { inputTokenBound } from './input-bound.js';
import type { Live } from './live.js';
import { counterTtlMs } from './periods.js';
import { exceeded, refuseWhileDown, unavailable } from './refusals.js';
import { capLines, counterKey, encodeTrack, holdsSet } from './reservation.js';

/** The request's HoldRecord (kernel/contracts/request-state.ts) over this process's live hold. */
export function holdRecord(rc: RequestContext, d: HoldDeps, live: Live): HoldRecord {
  return new LiveHoldRecord(rc, d, live);
}

/**
 * A class rather than an object literal with a getter: the literal's getter closure would give
 * every request a hidden class of its own, which the old generation holds, keeping the request's
 * objects through scavenges (kernel/http/route-context.ts).
 */
class LiveHoldRecord implements HoldRecord {
  readonly id: string;

  constructor(
    private readonly rc: RequestContext,
    private readonly d: HoldDeps,
    private readonly live: Live,
  ) {
    this.id = live.hold.i;
  }

  get amountMicroUsd(): number {
    return this.live.hold.a;
  }

  release(charge: number, outcome: 'settled' | 'refused'): Promise<void> {
    return this.d.settler.release(this.live, charge, outcome);
  }

  cover(call: Parameters<HoldRecord['cover']>[0]): Promise<void> {
    return cover(this.rc, this.d, this.live, call);
  }
}

/**
 * Before a further model call of a request (README "Holds for a tool loop"): the hold must cover
 * what the request was charged so far plus this call's own hold, priced as the first hold was
 * (input bound of the grown message list and the call's max tokens, on the call's model). A
 * call that used little of its hold leaves the rest to the next; when the hold falls short, the
 * difference is reserved on the counters the hold is already on, with the caps' current
 * amounts, and the cache's record of the hold is replaced by the grown one in the same step, so
 * a reaper or a settle always sees one hold with its whole amount.
 */
async function cover(rc: RequestContext, d: HoldDeps, live: Live, call: Parameters<HoldRecord['cover']>[0]): Promise<void> {
  const needed = holdMicroUsd(call.model, inputTokenBound(call.request, d.config), call.request.maxTokens);
  const charged = requestChargeMicroUsd(rc.state.outcome?.modelCalls ?? []);
  const h = live.hold;
  const short = charged + needed - h.a;
  if (short <= 0) return;
  // Settled already (cannot happen while dispatch runs): nothing to grow.
  if (live.ended) throw unavailable();
  refuseWhileDown(d.dependencies, d.totals, d.config);
  const grown = { ...h, a: h.a + short };
  // No cap applied when the hold was taken: only the amount to settle grows (no counter to move).
  if (h.k.length === 0) {
    live.hold = grown;
    return;
  }
  const now = Date.now();
  const graceMs = d.config.counterGraceSeconds * 1000;
  const caps = new Map(capLines(applicableCaps(d.snapshot().index, rc.state.principal!), short, now, graceMs).map((l) => [l.total, l]));
  // The hold's own counters (a cap added since applies from the next request); a lost counter is
  // seeded fresh (seeds.ts), this hold included: it is still in the set until the swap.
  const lines = h.k.map(([total, period]) => ({
    key: counterKey(total), amount: short, limit: caps.get(total)?.limit ?? null, ttlMs: counterTtlMs(period, now, graceMs), mustExist: true,
  }));
  const member = encodeTrack(grown);
  const expiresAt = now + d.config.holdExpirySeconds * 1000;
  let result;
  try {
    const track = { key: holdsSet, member, score: expiresAt, replaces: live.member };
    result = await d.seeds.run(lines, h.k.map(([total]) => ({ total, offset: 0 })), () => d.cache.reserve(lines, track));
  } catch (err) {
    throw unavailable(err);
  }
  if (result.ok) {
    live.hold = grown;
    live.member = member;
    live.expiresAt = expiresAt;
    return;
  }
  // Reaped as abandoned by another replica (this process could not keep it alive): its amount went back.
  if (result.gone) throw unavailable();
  const refused = caps.get(h.k[result.index]![0])!;
  throw exceeded(
    { scope: refused.cap.scope, remaining: Math.max(0, refused.limit! - result.current), required: short },
    "the next model call of this request's tool loop; the calls already made are charged",
  );
}
