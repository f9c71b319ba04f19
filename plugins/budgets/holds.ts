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
  type ReserveResult,
  type Tracked,
} from '../../kernel/index.js';
import { applicableCaps } from './caps.js';
import type { BudgetsConfig } from './config.js';
import { holdChain } from './choose.js';
import { holdMicroUsd } from './hold-amount.js';
import { inputTokenBound } from './input-bound.js';
import { capLines, encodeTrack, heldTotals, holdsSet, type CapLine, type TrackedHold } from './reservation.js';
import type { Snapshot } from './snapshot.js';
import type { Totals } from './totals.js';
import type { CounterSeeds } from './seeds.js';
import type { Live, LiveHolds } from './live.js';
import type { AheadHold, HoldsAhead } from './holds-ahead.js';
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
  /** Holds reserved ahead (Redis only: the in-process cache answers at once anyway). */
  ahead?: HoldsAhead;
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
 *
 * Synchronous while the cache answers at once (the in-process cache's `reserveNow`): the pipeline
 * then runs the phase without a promise or a suspended frame (bench/README.md "Twentieth look").
 * With Redis, or when a counter must be seeded from the database, it continues asynchronously.
 */
export function holdPhase(rc: RequestContext, d: HoldDeps): void | Compensation | Promise<Compensation> {
  const { principal, chat } = rc.state;
  const chosen = rc.state.model ?? rc.state.candidates[0];
  if (!principal || !chat || !chosen) return;
  // A database or cache that stopped answering: refuse before anything is reserved or sent.
  refuseWhileDown(d.dependencies, d.totals, d.config);
  return new HoldAttempt(rc, d, principal, chat, chosen).from(0);
}

/** One request's hold: the state kept while the chain's models are tried in turn. */
class HoldAttempt {
  private readonly pending: PendingReservation[];
  private readonly caps: ReturnType<typeof applicableCaps>;
  private readonly chain: CatalogModel[];
  private readonly input: number;
  // Made only once a cap refused (most requests never need it).
  private rooms: Map<string, number> | undefined;
  private refusal: Refusal | undefined;

  constructor(
    private readonly rc: RequestContext,
    private readonly d: HoldDeps,
    private readonly principal: Principal,
    private readonly chat: NonNullable<RequestContext['state']['chat']>,
    private readonly chosen: CatalogModel,
  ) {
    this.pending = rc.state.reservations ?? [];
    rc.state.reservations = [];
    const snap = d.snapshot();
    this.caps = applicableCaps(snap.index, principal);
    this.chain = holdChain(chosen, rc.state.candidates, snap.fallbackModel.get(principal.workspaceId), rc.state.needs, chat.maxTokens, d.catalog);
    this.input = inputTokenBound(chat, d.config, rc.state.needs);
  }

  /** Tries the chain from model `i` on; returns a promise only once the cache answered with one. */
  from(i: number): Compensation | Promise<Compensation> {
    const d = this.d;
    const graceMs = d.config.counterGraceSeconds * 1000;
    for (; i < this.chain.length; i++) {
      const model = this.chain[i]!;
      const amount = holdMicroUsd(model, this.input, this.chat.maxTokens);
      const now = Date.now();
      // A hold reserved ahead needs no cache call: the request goes upstream at once.
      if (d.ahead && amount > 0 && this.rooms === undefined) {
        const ahead = d.ahead.take(this.caps, this.principal, amount, this.pending, now);
        if (ahead) return this.aheadTaken(ahead, model, now);
      }
      const lines = amount > 0 ? capLines(this.caps, amount, now, graceMs) : [];
      // A counter that already refused a smaller or equal amount would refuse this one too.
      const rooms = this.rooms;
      if (rooms && lines.some((l) => (rooms.get(l.key) ?? Infinity) < amount)) continue;
      const hold = amount > 0 ? tracked(this.rc, this.principal, model, amount, heldTotals(this.caps, now), now) : undefined;
      // Made at its length: an empty list grown by push gets room for sixteen.
      const all = new Array<ReserveLine>(this.pending.length + lines.length);
      for (let j = 0; j < this.pending.length; j++) all[j] = this.pending[j]!.line;
      for (let j = 0; j < lines.length; j++) all[this.pending.length + j] = lines[j]!;
      const member = hold ? encodeTrack(hold) : '';
      const expiresAt = now + d.config.holdExpirySeconds * 1000;
      const track = hold ? { key: holdsSet, member, score: expiresAt } : undefined;
      const result = all.length === 0 && !hold ? fits : this.reserve(all, track, lines);
      if (result instanceof Promise) {
        const at = i;
        return result.then((r) => this.judge(r, model, amount, lines, hold, member, expiresAt) ?? this.from(at + 1));
      }
      const undo = this.judge(result, model, amount, lines, hold, member, expiresAt);
      if (undo) return undo;
    }
    throw exceeded(this.refusal!);
  }

  /** The cache call: at once when the cache can, else a promise; a failure is 503 (`unavailable`). */
  private reserve(all: ReserveLine[], track: Tracked | undefined, lines: CapLine[]): ReserveResult | Promise<ReserveResult> {
    const cache = this.d.cache;
    if (cache.reserveNow) {
      try {
        return cache.reserveNow(all, track);
      } catch (err) {
        return this.recover(err, all, track, lines);
      }
    }
    return cache.reserve(all, track).then(undefined, (err: unknown) => this.recover(err, all, track, lines));
  }

  /** The cache lost a counter (or failed): seeds are looked up only then (seeds.ts). */
  private recover(err: unknown, all: ReserveLine[], track: Tracked | undefined, lines: CapLine[]): Promise<ReserveResult> {
    const seeded = () => [...this.pending.map(() => undefined), ...lines.map((l) => ({ total: l.total, offset: 0 }))];
    return this.d.seeds.recover(err, all, seeded, () => this.d.cache.reserve(all, track)).then(undefined, (e: unknown) => {
      throw unavailable(e);
    });
  }

  /** The compensation once `result` fitted; undefined when a cap refused (the next model is tried). */
  private judge(result: ReserveResult, model: CatalogModel, amount: number, lines: CapLine[], hold: TrackedHold | undefined, member: string, expiresAt: number): Compensation | undefined {
    const { rc, d, pending } = this;
    if (!result.ok) {
      if (result.index < pending.length) throw pending[result.index]!.refusal(result.current, result.ttlMs);
      const c = lines[result.index - pending.length]!;
      const room = Math.max(0, c.limit! - result.current);
      (this.rooms ??= new Map()).set(c.key, room);
      this.refusal ??= { scope: c.cap.scope, remaining: room, required: amount };
      return undefined;
    }
    return this.admitted(model, hold ? d.live.add(hold, member, expiresAt) : undefined);
  }

  /** The request's own record of a hold reserved ahead (its id, amount and totals; the request's id and model). */
  private aheadTaken(ahead: AheadHold, model: CatalogModel, now: number): Compensation {
    const { i, a, k } = ahead.hold;
    const hold: TrackedHold = { i, a, k, r: this.rc.id, w: this.principal.workspaceId, p: this.principal.personId, y: this.principal.keyId, m: model.name, t: now };
    return this.admitted(model, this.d.live.add(hold, ahead.member, ahead.expiresAt));
  }

  /** The request holds `live` (undefined: nothing to hold) on `model`: the compensation that undoes it. */
  private admitted(model: CatalogModel, live: Live | undefined): Compensation {
    const { rc, d, pending } = this;
    rc.state.model = model;
    if (model !== this.chosen && this.refusal) rc.state.fallbackFrom = { model: this.chosen.name, scope: this.refusal.scope };
    // Dispatch may still fall back before the first chunk: only along the selection's own candidates
    // (a route's fallbacks) that this hold covers. The budget fallback model is for budget reasons only.
    const candidates = rc.state.candidates;
    // A selection of one model (an explicit model, most requests) keeps its list as it is.
    if (candidates.length !== 1 || candidates[0] !== model) {
      const held = live?.hold.a ?? 0;
      const after = candidates.slice(candidates.indexOf(model) + 1);
      rc.state.candidates = [model, ...after.filter((m) => holdMicroUsd(m, this.input, this.chat.maxTokens) <= held)];
    }
    rc.state.hold = live ? holdRecord(rc, d, live) : null;
    return () => undo(d, pending, live);
  }
}

/** What an empty reservation (nothing capped, no rate line) answers. */
const fits: ReserveResult = { ok: true, values: [] };

/** A later phase failed before dispatch: give back the hold and the pending lines (never sent, charge 0). */
async function undo(d: HoldDeps, pending: PendingReservation[], live: ReturnType<LiveHolds['add']> | undefined): Promise<void> {
  const lines = pending.map((p) => ({ key: p.line.key, delta: -p.line.amount }));
  if (live && !live.ended) await d.settler.release(live, 0, 'refused', lines);
  else if (lines.length > 0) await d.cache.adjust(lines);
}
