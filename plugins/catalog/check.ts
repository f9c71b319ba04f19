import { GatewayError, isGatewayError, type CheckResult, type ProviderCheckStatus, type ProviderRegistry } from '../../kernel/index.js';

/** What one free list-models call found, before it is shown on a provider row or on /healthz. */
export interface CheckOutcome {
  status: Exclude<ProviderCheckStatus, 'unchecked'> | 'timeout' | 'error' | 'unchecked';
  latencyMs: number;
}

export interface CheckTarget {
  name: string;
  vendor: string;
  address: string;
  apiKey?: string;
}

/**
 * Runs the provider check through a throwaway adapter from the registry (the same code that serves
 * requests), so what the check proves is what a request would meet. Without the providers plugin
 * there is nothing to check with and the outcome is `unchecked`.
 */
export async function runCheck(registry: ProviderRegistry | undefined, target: CheckTarget, timeoutMs: number): Promise<CheckOutcome> {
  if (!registry) return { status: 'unchecked', latencyMs: 0 };
  const started = performance.now();
  const latencyMs = (): number => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(timeoutMs);
  const settings = { name: target.name, address: target.address, ...(target.apiKey ? { apiKey: target.apiKey } : {}) };
  let adapter: ReturnType<ProviderRegistry['probe']> | undefined;
  try {
    adapter = registry.probe(target.vendor, settings);
    const status = await adapter.check(signal);
    return { status: status === 'could_not_connect' && signal.aborted ? 'timeout' : status, latencyMs: latencyMs() };
  } catch (err) {
    if (signal.aborted) return { status: 'timeout', latencyMs: latencyMs() };
    const code = isGatewayError(err) ? err.code : '';
    if (code === 'provider_auth_failed') return { status: 'key_refused', latencyMs: latencyMs() };
    if (code === 'upstream_unavailable') return { status: 'could_not_connect', latencyMs: latencyMs() };
    return { status: 'error', latencyMs: latencyMs() };
  } finally {
    // Not awaited: a pool's close may wait on an aborted request; the answer should not.
    void adapter?.close().catch(() => undefined);
  }
}

/** The three results a provider row shows (SPEC.md "Provider check result"); anything but a refused key is "could not connect". */
export function storedStatus(o: CheckOutcome): ProviderCheckStatus {
  if (o.status === 'timeout' || o.status === 'error') return 'could_not_connect';
  return o.status;
}

/** The /healthz entry for a provider (SPEC.md "Health status" error codes). */
export function healthResult(o: CheckOutcome): CheckResult {
  const down = (error_code: CheckResult['error_code']): CheckResult => ({ status: 'down', latency_ms: o.latencyMs, error_code });
  switch (o.status) {
    case 'connected':
    case 'unchecked':
      return { status: 'ok', latency_ms: o.latencyMs };
    case 'key_refused':
      return down('auth_failed');
    case 'could_not_connect':
      return down('unreachable');
    case 'timeout':
      return down('timeout');
    default:
      return down('error');
  }
}

/**
 * The model ids a provider lists (for importing them), through a throwaway adapter like the check.
 * 422 when the vendor has no list; the adapter's refusals (key refused, unreachable) as they are.
 */
export async function listProviderModels(registry: ProviderRegistry | undefined, target: CheckTarget, timeoutMs: number): Promise<string[]> {
  if (!registry) throw new GatewayError('provider_not_configured', 'No provider adapters are loaded on this service.');
  const adapter = registry.probe(target.vendor, { name: target.name, address: target.address, ...(target.apiKey ? { apiKey: target.apiKey } : {}) });
  try {
    if (!adapter.listModels) throw new GatewayError('provider_not_configured', `Provider ${target.name} has no model list to import from; add its models by name.`);
    return await adapter.listModels(AbortSignal.timeout(timeoutMs));
  } finally {
    void adapter.close().catch(() => undefined);
  }
}
