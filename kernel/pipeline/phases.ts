import type { RequestContext } from './context.js';

/**
 * The request pipeline's phases, in order (ARCHITECTURE.md §5). A closed set: registering a hook
 * under any other name stops boot.
 */
export const phaseNames = [
  'receive',
  'authenticate',
  'validate',
  'conversation',
  'select',
  'capabilities',
  'admit',
  'hold',
  'dispatch',
  'settle',
] as const;

export type PhaseName = (typeof phaseNames)[number];

/** Undoes a reservation (rate-limit slot, budget hold) when a later phase fails or the client leaves. */
export type Compensation = () => void | Promise<void>;

type Awaitable<T> = T | Promise<T>;

/** A hook that may reserve something and hand back its compensation. */
export type ReservingHook = (ctx: RequestContext) => Awaitable<void | Compensation>;
/** A hook that only reads or decides; throw a GatewayError to stop the request. */
export type PlainHook = (ctx: RequestContext) => Awaitable<void>;

/**
 * Each phase's hook signature. Only `admit` and `hold` reserve, so only they may return a
 * compensation; `settle` hooks run for every request that passed `receive`, failures included.
 *
 * @example
 * ctx.hook('receive', (rc) => { rc.headers['x-hello'] = 'world'; });
 */
export interface PhaseHooks {
  receive: PlainHook;
  authenticate: PlainHook;
  validate: PlainHook;
  conversation: PlainHook;
  select: PlainHook;
  capabilities: PlainHook;
  admit: ReservingHook;
  hold: ReservingHook;
  dispatch: PlainHook;
  settle: PlainHook;
}

export function isPhaseName(name: string): name is PhaseName {
  return (phaseNames as readonly string[]).includes(name);
}
