import {
  orderedUuid,
  type CachePort,
  type CatalogModel,
  type CatalogService,
  type Compensation,
  type Dependencies,
  type Logger,
  type PendingReservation,
  type Principal,
  type RequestContext,
  type ReserveLine,
} from '../../kernel/index.js';
import { applicableCaps } from './caps.js';
import type { BudgetsConfig } from './config.js';
import { holdChain } from './choose.js';
import { holdMicroUsd } from './hold-amount.js';
import { inputTokenBound } from './input-bound.js';
import { capLines, encodeTrack, heldTotals, holdsSet, type TrackedHold } from './reservation.js';
import type { Snapshot } from './snapshot.js';
import type { Totals } from './totals.js';
import type { CounterSeeds } from './seeds.js';
import type { LiveHolds } from './live.js';
import type { Settler } from './settler.js';
import { holdRecord } from './cover.js';
import { exceeded, refuseWhileDown, unavailable, type Refusal } from './refusals.js';

export interface HoldDeps {
  cache: CachePort;
  catalog: CatalogService;
  snapshot: () => Snapshot;
  totals: Totals;
  seeds: CounterSeeds;
  live: LiveHolds;
  settler: Settler;
  dependencies: Dependencies;
  log: Logger;
  config: BudgetsConfig;
}

/** `k` is the day's shared list of the totals reserved on (heldTotals), in the order of the hold's lines. */
function tracked(rc: RequestContext, p: Principal, model: CatalogModel, amount: number, k: TrackedHold['k'], t: number): TrackedHold {
  return { i: orderedUuid(t), a: amount, k, r: rc.id, w: p.workspaceId, p: p.personId, y: p.keyId, m: model.name, t };
}

/**
 * The hold phase (README "Holds", "Cheaper model"): prices the request on the chosen model and
 * reserves the hold against every applicable cap, together with the lines `admit` left pending
 * (the rate limit), in ONE cache call. When a cap lacks room it tries the next model of the chain;
 * none fits → 402 budget_exceeded. Returns the compensation that undoes the reservation.
 */
export async function holdPhase(rc: RequestContext, d: HoldDeps): Promise<void | Compensation> {
  const { principal, chat } = rc.state;
  const chosen = rc.state.model ?? rc.state.candidates[0];
  if (!principal || !chat || !chosen) return;
  // A database or cache that stopped answering: refuse before anything is reserved or sent.
  refuseWhileDown(d.dependencies, d.totals, d.config);
  const pending = rc.state.reservations ?? [];
  rc.state.reservations = [];
  const snap = d.snapshot();
  const caps = applicableCaps(snap.index, principal);
  const chain = holdChain(chosen, rc.state.candidates, snap.fallbackModel.get(principal.workspaceId), rc.state.needs, chat.maxTokens, d.catalog);
  const input = inputTokenBound(chat, d.config, rc.state.needs);
  const graceMs = d.config.counterGraceSeconds * 1000;
  // Made only once a cap refused (most requests never need it).
  let rooms: Map<string, number> | undefined;
  let refusal: Refusal | undefined;
  for (const model of chain) {
    const amount = holdMicroUsd(model, input, chat.maxTokens);
    const now = Date.now();
    const lines = amount > 0 ? capLines(caps, amount, now, graceMs) : [];
    // A counter that already refused a smaller or equal amount would refuse this one too.
    if (rooms && lines.some((l) => (rooms!.get(l.line.key) ?? Infinity) < amount)) continue;
    const hold = amount > 0 ? tracked(rc, principal, model, amount, heldTotals(caps, now), now) : undefined;
    const all: ReserveLine[] = [];
    for (const p of pending) all.push(p.line);
    for (const l of lines) all.push(l.line);
    const member = hold ? encodeTrack(hold) : '';
    const expiresAt = now + d.config.holdExpirySeconds * 1000;
    let result;
    const track = hold ? { key: holdsSet, member, score: expiresAt } : undefined;
    try {
      if (all.length === 0 && !hold) result = { ok: true } as const;
      else {
        try {
          result = await d.cache.reserve(all, track);
        } catch (err) {
          // The cache lost a counter (or failed): seeds are looked up only then (seeds.ts).
          const seeded = () => [...pending.map(() => undefined), ...lines.map((l) => ({ total: l.total, offset: 0 }))];
          result = await d.seeds.recover(err, all, seeded, () => d.cache.reserve(all, track));
        }
      }
    } catch (err) {
      throw unavailable(err);
    }
    if (!result.ok) {
      if (result.index < pending.length) throw pending[result.index]!.refusal(result.current, result.ttlMs);
      const c = lines[result.index - pending.length]!;
      const room = Math.max(0, c.line.limit! - result.current);
      (rooms ??= new Map()).set(c.line.key, room);
      refusal ??= { scope: c.cap.scope, remaining: room, required: amount };
      continue;
    }
    rc.state.model = model;
    if (model !== chosen && refusal) rc.state.fallbackFrom = { model: chosen.name, scope: refusal.scope };
    // Dispatch may still fall back before the first chunk: only along the selection's own candidates
    // (a route's fallbacks) that this hold covers. The budget fallback model is for budget reasons only.
    const candidates = rc.state.candidates;
    // A selection of one model (an explicit model, most requests) keeps its list as it is.
    if (candidates.length !== 1 || candidates[0] !== model) {
      const after = candidates.slice(candidates.indexOf(model) + 1);
      rc.state.candidates = [model, ...after.filter((m) => holdMicroUsd(m, input, chat.maxTokens) <= amount)];
    }
    const live = hold ? d.live.add(hold, member, expiresAt) : undefined;
    rc.state.hold = live ? holdRecord(rc, d, live) : null;
    return () => undo(d, pending, live);
  }
  throw exceeded(refusal!);
}

/** A later phase failed before dispatch: give back the hold and the pending lines (never sent, charge 0). */
async function undo(d: HoldDeps, pending: PendingReservation[], live: ReturnType<LiveHolds['add']> | undefined): Promise<void> {
  const lines = pending.map((p) => ({ key: p.line.key, delta: -p.line.amount }));
  if (live && !live.ended) await d.settler.release(live, 0, 'refused', lines);
  else if (lines.length > 0) await d.cache.adjust(lines);
}
