import * as assert from 'uvu/assert';
import { CacheToken, StoreToken } from '../../kernel/index.js';
import { BudgetsFlushToken } from '../../plugins/budgets/index.js';
import { counterKey, holdsSet } from '../../plugins/budgets/reservation.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import type { ToolsWorld } from './support.js';

type Row = Record<string, number | string | null>;

/**
 * The money books of the tools world's member (the admin who owns its key): a lifetime member cap
 * moved to "spent so far + room" per test, and the check that usage records, the running total
 * and the cache counter agree, within the cap, with every hold settled.
 */
export class MemberBooks {
  private constructor(private readonly w: ToolsWorld, private readonly me: string, private readonly capId: string) {}

  static async open(w: ToolsWorld): Promise<MemberBooks> {
    const me = (await w.admin.ok<{ person: { id: string } }>('GET', '/me')).person.id;
    const cap = await w.ws<{ id: string }>('POST', '/budget-caps', { scope: 'member', person_id: me, amount_micro_usd: 10_000_000, period: 'lifetime' });
    return new MemberBooks(w, me, cap.body.id);
  }

  sql<T = Row>(q: string, p: unknown[] = []): Promise<T[]> {
    return this.w.svc.service.get(StoreToken).execute<T>(q, p);
  }

  async flush(): Promise<void> {
    await this.w.svc.service.get(TracingFlushToken)();
    await this.w.svc.service.get(BudgetsFlushToken)();
  }

  private get totalKey(): string {
    return `member:${this.w.workspaceId}/${this.me}:lifetime:all`;
  }

  /** Sets the member cap to what was spent so far plus `amount`; returns the cap and the spend. */
  async room(amount: number): Promise<{ cap: number; spent: number }> {
    await this.flush();
    const caps = (await this.w.ws<{ data: Array<{ id: string; spent_micro_usd: number }> }>('GET', '/budget-caps')).body.data;
    const spent = caps.find((c) => c.id === this.capId)!.spent_micro_usd;
    assert.is((await this.w.ws('PATCH', `/budget-caps/${this.capId}`, { amount_micro_usd: spent + amount })).status, 200);
    return { cap: spent + amount, spent };
  }

  /**
   * Once the requests' records are written and their holds settled (settle runs just after the
   * reply, the counters move after its commit): usage records = running total = cache counter,
   * within the cap, every hold settled and none left in the cache.
   */
  async balanced(cap: number, requestIds: string[]): Promise<void> {
    const cache = this.w.svc.service.get(CacheToken);
    const until = Date.now() + 5000;
    for (;;) {
      await this.flush();
      try {
        const [n] = await this.sql<{ n: number | string }>(`select count(*) as n from usage_records where id in (${requestIds.map(() => '?').join(',')})`, requestIds);
        assert.is(Number(n!.n), requestIds.length, 'a usage record per request');
        assert.equal(await this.sql("select state from budget_holds where state <> 'settled'"), [], 'every hold settled');
        const [u] = await this.sql<{ s: number | string | null }>('select sum(cost_micro_usd) as s from usage_records where workspace_id = ? and person_id = ?', [this.w.workspaceId, this.me]);
        const [t] = await this.sql<{ t: number | string }>('select total_micro_usd as t from budget_totals where total_key = ?', [this.totalKey]);
        const spent = Number(u!.s ?? 0);
        assert.is(Number(t!.t), spent, 'running total = usage records');
        assert.is(Number(await cache.get(counterKey(this.totalKey))), spent, 'cache counter = usage records (no hold in flight)');
        assert.ok(spent <= cap, `spent ${spent} > cap ${cap}`);
        break;
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((done) => setTimeout(done, 30));
      }
    }
    assert.equal(await cache.expired(holdsSet, Number.POSITIVE_INFINITY, 100), [], 'no hold left in the cache');
  }

  async holdOf(requestId: string): Promise<Row> {
    return (await this.sql('select * from budget_holds where request_id = ?', [requestId]))[0]!;
  }

  async recordOf(requestId: string): Promise<Row> {
    return (await this.sql('select * from usage_records where id = ?', [requestId]))[0]!;
  }
}
