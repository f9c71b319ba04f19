import type { RetentionKind } from '../../kernel/index.js';

/**
 * Budget records under the retention job (SPEC.md "Retention"). Running totals (budget_totals)
 * are never a retention kind: caps, lifetime ones included, are enforced from them.
 */
export const budgetRetention: RetentionKind[] = [
  {
    kind: 'budget_holds',
    summary: 'Budget holds that are over (settled, refused, abandoned)',
    table: 'budget_holds',
    keyColumn: 'id',
    timeColumn: 'ended_at',
    defaultDays: 30,
    where: "state in ('settled', 'refused', 'abandoned')",
  },
  {
    kind: 'budget_alerts',
    summary: 'Budget alerts sent or given up on',
    table: 'budget_alerts',
    keyColumn: 'id',
    timeColumn: 'created_at',
    defaultDays: 396,
    where: "state in ('sent', 'given_up', 'recorded')",
  },
];
