import { Type, type Static, type Store } from '../../../kernel/index.js';
import { capScopeId, totalKey, type Cap } from '../caps.js';
import { periodKey, periods } from '../periods.js';

export const PeriodSchema = Type.Union(periods.map((p) => Type.Literal(p)), { description: 'day, week (ISO, Monday), month (calendar) — all UTC — or lifetime' });
export const ThresholdsSchema = Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { maxItems: 10, description: 'Alert thresholds, percent of the amount' });

export const CapView = Type.Object({
  id: Type.String(),
  scope: Type.Union([Type.Literal('instance'), Type.Literal('workspace'), Type.Literal('member'), Type.Literal('key')]),
  workspace_id: Type.Union([Type.String(), Type.Null()]),
  person_id: Type.Union([Type.String(), Type.Null()]),
  key_id: Type.Union([Type.String(), Type.Null()]),
  amount_micro_usd: Type.Integer(),
  period: PeriodSchema,
  alert_thresholds: ThresholdsSchema,
  period_key: Type.String({ description: 'The current period' }),
  spent_micro_usd: Type.Integer({ description: 'Settled spend in the current period (running total)' }),
  remaining_micro_usd: Type.Integer(),
});
export type CapView = Static<typeof CapView>;

/** Caps with their current period's settled total, read from the running totals. */
export async function capViews(store: Store, caps: Cap[], t = Date.now()): Promise<CapView[]> {
  const keys = caps.map((c) => totalKey(c.scope, capScopeId(c), c.period, t));
  const spent = new Map<string, number>();
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    const rows = await store.execute<{ total_key: string; total_micro_usd: string | number }>(
      `select total_key, total_micro_usd from budget_totals where total_key in (${chunk.map(() => '?').join(',')})`,
      chunk,
    );
    for (const r of rows) spent.set(r.total_key, Number(r.total_micro_usd));
  }
  return caps.map((c, i) => {
    const s = spent.get(keys[i]!) ?? 0;
    return {
      id: c.id,
      scope: c.scope,
      workspace_id: c.workspaceId || null,
      person_id: c.scope === 'member' ? c.subjectId : null,
      key_id: c.scope === 'key' ? c.subjectId : null,
      amount_micro_usd: c.amountMicroUsd,
      period: c.period,
      alert_thresholds: c.thresholds,
      period_key: periodKey(c.period, t),
      spent_micro_usd: s,
      remaining_micro_usd: Math.max(0, c.amountMicroUsd - s),
    };
  });
}

/** Thresholds as stored: unique, ascending. */
export const normalizeThresholds = (t: number[]): number[] => [...new Set(t)].sort((a, b) => a - b);
