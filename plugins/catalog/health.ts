import { createHash } from 'node:crypto';
import type { CachePort, CheckResult } from '../../kernel/index.js';
import { healthResult, type CheckOutcome } from './check.js';
import type { CatalogSnapshot } from './snapshot.js';
import type { ProviderRow } from './repo.js';

export interface ProviderHealthOptions {
  /** SPEC.md Limits: a provider key is checked at most once a minute. */
  intervalMs: number;
  /** How long /healthz waits for a check in progress before answering `timeout` for it. */
  waitMs: number;
  /** Longest a check may take (its lock lives a little longer). */
  checkTimeoutMs: number;
}

interface Shared {
  result: CheckResult;
  at: number;
}

/** Results are per provider and per address + stored key: a changed key is checked afresh. */
export function fingerprint(address: string, apiKeyEnc: string | null): string {
  return createHash('sha256').update(`${address}\n${apiKeyEnc ?? ''}`).digest('hex').slice(0, 16);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * The `provider:<name>` components of /healthz. Each provider's free check runs at most once per
 * interval across all replicas: the last result is shared through the cache under a key that
 * expires with the interval, and a short lock keeps replicas from checking at the same moment.
 * Entries carry status, latency and an error code only, never the address.
 */
export class ProviderHealth {
  private readonly local = new Map<string, Shared & { fp: string }>();
  private readonly inFlight = new Map<string, Promise<CheckResult>>();

  constructor(
    private readonly cache: CachePort,
    private readonly snapshot: CatalogSnapshot,
    private readonly check: (row: ProviderRow) => Promise<CheckOutcome>,
    private readonly options: ProviderHealthOptions,
  ) {}

  async list(): Promise<Record<string, CheckResult>> {
    // SPEC.md: built-in providers show only with an instance-wide key; workspace keys never.
    const shown = this.snapshot.providers().filter((p) => !p.builtIn || p.hasKey);
    const rows = shown.flatMap((p) => this.snapshot.row(p.name) ?? []);
    const entries = await Promise.all(rows.map(async (r) => [`provider:${r.name}`, await this.result(r)] as const));
    return Object.fromEntries(entries);
  }

  /** Keeps a fresh outcome (an admin's check) so /healthz does not repeat that call within the interval. */
  async record(name: string, fp: string, outcome: CheckOutcome): Promise<void> {
    if (outcome.status === 'unchecked') return;
    await this.keep(name, fp, { result: healthResult(outcome), at: Date.now() });
  }

  private key(name: string, fp: string): string {
    return `catalog:health:${name}:${fp}`;
  }

  private async keep(name: string, fp: string, shared: Shared): Promise<void> {
    this.local.set(name, { ...shared, fp });
    const ttl = this.options.intervalMs - (Date.now() - shared.at);
    if (ttl > 0) await this.cache.set(this.key(name, fp), JSON.stringify(shared), ttl).catch(() => undefined);
  }

  private async result(row: ProviderRow): Promise<CheckResult> {
    const fp = fingerprint(row.address, row.apiKeyEnc);
    const mine = this.local.get(row.name);
    const known = mine?.fp === fp ? mine : undefined;
    if (known && Date.now() - known.at < this.options.intervalMs) return known.result;
    const flight = `${row.name}:${fp}`;
    let pending = this.inFlight.get(flight);
    if (!pending) {
      pending = this.refresh(row, fp).finally(() => this.inFlight.delete(flight));
      this.inFlight.set(flight, pending);
    }
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<CheckResult>((done) => {
      timer = setTimeout(() => done(known?.result ?? { status: 'down', latency_ms: this.options.waitMs, error_code: 'timeout' }), this.options.waitMs);
    });
    try {
      return await Promise.race([pending, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async shared(name: string, fp: string): Promise<Shared | undefined> {
    const text = await this.cache.get(this.key(name, fp)).catch(() => null);
    return text ? (JSON.parse(text) as Shared) : undefined;
  }

  private async refresh(row: ProviderRow, fp: string): Promise<CheckResult> {
    const found = await this.shared(row.name, fp);
    if (found) {
      this.local.set(row.name, { ...found, fp });
      return found.result;
    }
    const lockMs = this.options.checkTimeoutMs + 1000;
    const mine = await this.cache.setIfAbsent(`${this.key(row.name, fp)}:lock`, '1', lockMs).catch(() => true);
    if (!mine) {
      // Another replica is checking: its result appears under the shared key.
      for (const until = Date.now() + lockMs; Date.now() < until; ) {
        await sleep(100);
        const theirs = await this.shared(row.name, fp);
        if (theirs) {
          this.local.set(row.name, { ...theirs, fp });
          return theirs.result;
        }
      }
      return { status: 'down', latency_ms: lockMs, error_code: 'timeout' };
    }
    const outcome = await this.check(row);
    const shared = { result: healthResult(outcome), at: Date.now() };
    await this.keep(row.name, fp, shared);
    return shared.result;
  }
}
