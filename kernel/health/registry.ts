import { defineToken } from '../container/tokens.js';

/** One component's result on /healthz. */
export interface CheckResult {
  status: 'ok' | 'down';
  latency_ms: number;
  error_code?: 'timeout' | 'unreachable' | 'auth_failed' | 'error' | 'unavailable';
}

/** Resolves when the component is fine; throws (or returns an error_code) when it is not. */
export type HealthCheck = (signal: AbortSignal) => Promise<void | CheckResult['error_code']>;

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down';
  checks: Record<string, CheckResult>;
}

/** Error codes a failed check maps to when it threw rather than naming one. */
function codeOf(err: unknown): CheckResult['error_code'] {
  const code = (err as { code?: string })?.code ?? '';
  if (code === 'ETIMEDOUT' || (err as Error)?.name === 'TimeoutError') return 'timeout';
  return 'unreachable';
}

/**
 * The components /healthz reports. The kernel adds `database` and `cache` (critical: down makes
 * the service `down`, HTTP 503); plugins add theirs (a non-critical one down makes it `degraded`).
 *
 * @example
 * health.add('classifier', async () => { if (!model) return 'unavailable'; }, { critical: false });
 */
export class HealthRegistry {
  private readonly checks = new Map<string, { check: HealthCheck; critical: boolean }>();
  private readonly last = new Map<string, CheckResult['status']>();
  private readonly dynamic: Array<() => Promise<Record<string, CheckResult>>> = [];

  constructor(
    private readonly timeoutMs = 2000,
    private readonly onChange: (component: string, result: CheckResult) => void = () => {},
  ) {}

  add(component: string, check: HealthCheck, critical: boolean): void {
    if (this.checks.has(component)) throw new Error(`health component "${component}" is registered twice`);
    this.checks.set(component, { check, critical });
  }

  /** Components listed at run time; they are never critical (a provider down means `degraded`). */
  addDynamic(list: () => Promise<Record<string, CheckResult>>): void {
    this.dynamic.push(list);
  }

  async run(): Promise<HealthReport> {
    const fixed = Promise.all([...this.checks].map(async ([name, { check, critical }]) => [name, critical, await this.one(check)] as const));
    const listed = Promise.all(this.dynamic.map((list) => list().catch(() => ({}) as Record<string, CheckResult>)));
    const entries: Array<readonly [string, boolean, CheckResult]> = [...(await fixed)];
    for (const group of await listed) for (const [name, result] of Object.entries(group)) entries.push([name, false, result]);
    const checks: Record<string, CheckResult> = {};
    let status: HealthReport['status'] = 'ok';
    for (const [name, critical, result] of entries) {
      checks[name] = result;
      if (this.last.get(name) !== result.status) {
        if (this.last.has(name) || result.status === 'down') this.onChange(name, result);
        this.last.set(name, result.status);
      }
      if (result.status === 'down') status = critical ? 'down' : status === 'down' ? 'down' : 'degraded';
    }
    return { status, checks };
  }

  private async one(check: HealthCheck): Promise<CheckResult> {
    const started = performance.now();
    // A timer cleared as soon as the check answers, not AbortSignal.timeout: that one keeps its
    // signal, listener and this call's promises alive for the whole timeout after every poll.
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
      }, this.timeoutMs);
    });
    const latency = () => Math.round(performance.now() - started);
    try {
      const code = await Promise.race([check(controller.signal), timedOut]);
      return code ? { status: 'down', latency_ms: latency(), error_code: code } : { status: 'ok', latency_ms: latency() };
    } catch (err) {
      return { status: 'down', latency_ms: latency(), error_code: codeOf(err) };
    } finally {
      clearTimeout(timer);
    }
  }
}

export const HealthToken = defineToken<HealthRegistry>('kernel.health');
