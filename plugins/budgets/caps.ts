import type { Principal } from '../../kernel/index.js';
import { periodKey, periods, type Period } from './periods.js';

/** SPEC.md: cap scopes are instance, workspace, member (a person within a workspace) and key. */
export const scopes = ['instance', 'workspace', 'member', 'key'] as const;
export type Scope = (typeof scopes)[number];

/** A budget cap as the snapshot holds it. */
export interface Cap {
  id: string;
  scope: Scope;
  /** '' for instance caps. */
  workspaceId: string;
  /** The person (member caps) or key (key caps); '' otherwise. */
  subjectId: string;
  amountMicroUsd: number;
  period: Period;
  /** Alert thresholds, percent of the amount, ascending. */
  thresholds: number[];
}

/** The id a scope's totals are kept under: `*`, the workspace, `workspace/person`, or the key. */
export function scopeId(scope: Scope, workspaceId: string, subjectId: string): string {
  switch (scope) {
    case 'instance':
      return '*';
    case 'workspace':
      return workspaceId;
    case 'member':
      return `${workspaceId}/${subjectId}`;
    case 'key':
      return subjectId;
  }
}

export const capScopeId = (c: Pick<Cap, 'scope' | 'workspaceId' | 'subjectId'>): string => scopeId(c.scope, c.workspaceId, c.subjectId);

/** The scopes a request spends against, with their ids (no key scope for a person's own chat). */
export function principalScopes(p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>): Array<{ scope: Scope; id: string }> {
  const out: Array<{ scope: Scope; id: string }> = [
    { scope: 'instance', id: '*' },
    { scope: 'workspace', id: p.workspaceId },
    { scope: 'member', id: `${p.workspaceId}/${p.personId}` },
  ];
  if (p.keyId) out.push({ scope: 'key', id: p.keyId });
  return out;
}

/**
 * A principal's cache key: its API key's id alone (a key belongs to one person in one workspace;
 * the id string already exists, so nothing is built per request), else workspace and person.
 */
function principalKey(p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>): string {
  return p.keyId ?? `${p.workspaceId}|${p.personId}|`;
}

/** The running total's key: scope, scope id, period and the period's key, e.g. `member:w1/p1:month:2026-11`. */
export function totalKey(scope: Scope, id: string, period: Period, t: number): string {
  return `${scope}:${id}:${period}:${periodKey(period, t)}`;
}

/**
 * Every running total a charge at `t` adds to: each scope of the request in each period. The list
 * is the same for a principal all day, so it is kept for the day (bounded) instead of building
 * sixteen strings on every request.
 */
export function chargedTotalKeys(p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>, t: number): string[] {
  const day = Math.floor(t / 86_400_000);
  if (day !== keysDay || keysByPrincipal.size > 10_000) {
    keysDay = day;
    keysByPrincipal.clear();
  }
  const id = principalKey(p);
  let keys = keysByPrincipal.get(id);
  if (!keys) {
    keys = principalScopes(p).flatMap(({ scope, id: sid }) => periods.map((period) => totalKey(scope, sid, period, t)));
    keysByPrincipal.set(id, keys);
  }
  return keys;
}

let keysDay = Number.NaN;
const keysByPrincipal = new Map<string, string[]>();

/**
 * The totals of `keys` (a chargedTotalKeys list) some cap of `caps` is kept against: the ones whose
 * values are read back after a commit (alerts, and the totals kept in memory). The same for a key
 * list until the caps change (a new snapshot is a new array), so kept per both.
 */
export function cappedTotalKeys(caps: readonly Cap[], keys: readonly string[]): readonly string[] {
  let byKeys = capped.get(caps);
  if (!byKeys) capped.set(caps, (byKeys = new WeakMap()));
  let out = byKeys.get(keys);
  if (!out) {
    // `scope:scopeId:period:` of every cap; a key is that and its period's key.
    const prefixes = new Set(caps.map((c) => `${c.scope}:${capScopeId(c)}:${c.period}:`));
    out = keys.filter((k) => prefixes.has(k.slice(0, k.lastIndexOf(':') + 1)));
    byKeys.set(keys, out);
  }
  return out;
}

const capped = new WeakMap<readonly Cap[], WeakMap<readonly string[], readonly string[]>>();

/** Caps indexed by `scope:scopeId` for the request path. */
export type CapIndex = Map<string, Cap[]>;

export function indexCaps(caps: Cap[]): CapIndex {
  const index: CapIndex = new Map();
  for (const c of caps) {
    const k = `${c.scope}:${capScopeId(c)}`;
    const list = index.get(k) ?? [];
    list.push(c);
    index.set(k, list);
  }
  return index;
}

/**
 * The caps a request spends against, narrowest first: when several lack room, the reservation
 * reports the first, so a refusal names the cap closest to the caller (their key, then themselves).
 */
export function applicableCaps(index: CapIndex, p: Pick<Principal, 'workspaceId' | 'personId' | 'keyId'>): Cap[] {
  // The same for a principal until the caps change (a new snapshot is a new index): kept per index.
  let byPrincipal = applicable.get(index);
  if (!byPrincipal) applicable.set(index, (byPrincipal = new Map()));
  const id = principalKey(p);
  let caps = byPrincipal.get(id);
  if (!caps) {
    caps = principalScopes(p).reverse().flatMap(({ scope, id: sid }) => index.get(`${scope}:${sid}`) ?? []);
    if (byPrincipal.size >= 10_000) byPrincipal.clear();
    byPrincipal.set(id, caps);
  }
  return caps;
}

const applicable = new WeakMap<CapIndex, Map<string, Cap[]>>();
