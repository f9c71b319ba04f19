import type { Logger, Store } from '../../kernel/index.js';

/**
 * Records when each key was last used without a database write per request: uses are noted in
 * memory and written in one transaction every `flushMs` and at stop. A newer time written by
 * another replica is never overwritten with an older one.
 */
export class LastUsed {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly flushMs: number,
  ) {}

  /** Called on the request path: one map write. */
  touch(keyId: string, at = Date.now()): void {
    this.pending.set(keyId, at);
  }

  /** A use noted here and not yet written, so lists on this replica show it at once. */
  unflushed(keyId: string): number | undefined {
    return this.pending.get(keyId);
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Writes every noted use; on failure they are kept for the next attempt. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.transaction(async (exec) => {
        for (const [id, at] of batch) {
          await exec('update identity_api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)', [at, id, at]);
        }
      });
      this.log.debug('identity.last_used_flushed', { keys: batch.size });
    } catch (err) {
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.log.warn('identity.last_used_flush_failed', { keys: batch.size, error_code: (err as { code?: string }).code ?? 'error' });
    }
  }
}
