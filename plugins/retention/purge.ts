import type { RetentionKind, Store } from '../../kernel/index.js';

const DAY_MS = 86_400_000;

export interface PurgeOptions {
  batchSize: number;
  /** Pause between batches so requests interleave with a long purge. */
  pauseMs: number;
}

/** The time before which a kind's records go, in the column's unit; null keeps everything. */
export function cutoff(kind: RetentionKind, days: number | null | 'expired', now: Date): number | null {
  if (days === null) return null;
  let ms = days === 'expired' ? now.getTime() : now.getTime() - days * DAY_MS;
  if (kind.floor) ms = Math.min(ms, kind.floor(now));
  return kind.timeUnit === 'us' ? ms * 1000 : ms;
}

const pause = (ms: number) => new Promise<void>((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

/**
 * Deletes rows older than `before` in batches of `batchSize` keys, each its own short statement,
 * so no lock is held for long and the event loop turns between batches. Returns the rows deleted.
 */
export async function purge(store: Store, kind: RetentionKind, before: number, o: PurgeOptions, workspace?: string): Promise<number> {
  const conds = [`${kind.timeColumn} < ?`];
  const params: unknown[] = [before];
  if (kind.where) conds.push(`(${kind.where})`);
  if (workspace !== undefined && kind.workspaceColumn) {
    conds.push(`${kind.workspaceColumn} = ?`);
    params.push(workspace);
  }
  const k = kind.keyColumn;
  const sql = `delete from ${kind.table} where ${k} in (select ${k} from ${kind.table} where ${conds.join(' and ')} limit ${o.batchSize}) returning ${k}`;
  let total = 0;
  for (;;) {
    const deleted = (await store.execute(sql, params)).length;
    total += deleted;
    if (deleted === 0) return total;
    await pause(o.pauseMs);
  }
}

/** A kind with periods per workspace: each workspace present in the table uses its own days. */
export async function purgePerWorkspace(store: Store, kind: RetentionKind, fallbackDays: number | null, now: Date, o: PurgeOptions): Promise<number> {
  const set = new Map((await kind.workspacePeriods!()).map((p) => [p.workspaceId, p.days]));
  const col = kind.workspaceColumn!;
  const present = await store.execute<{ ws: string | null }>(`select distinct ${col} as ws from ${kind.table}`);
  let total = 0;
  for (const { ws } of present) {
    if (ws === null) continue;
    const before = cutoff(kind, set.get(ws) ?? fallbackDays, now);
    if (before !== null) total += await purge(store, kind, before, o, ws);
  }
  return total;
}
