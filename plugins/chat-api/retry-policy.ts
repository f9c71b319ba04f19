import { Type, type ErrorCode, type GatewayError, type Static, type UpstreamFailureHints, type CallSignal } from '../../kernel/index.js';

/** The dispatcher's fault handling (chat-api config `upstream`); README "When the upstream fails". */
export const upstreamConfig = Type.Object(
  {
    /** Further attempts on the same model after a transient failure before the first chunk. */
    retries: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
    /** First backoff; each further one doubles, with full jitter, up to maxBackoffMs. */
    backoffMs: Type.Integer({ minimum: 0, default: 250 }),
    maxBackoffMs: Type.Integer({ minimum: 0, default: 4000 }),
    /** A vendor's Retry-After up to this is waited for; a longer one moves on to the next candidate. */
    maxRetryAfterMs: Type.Integer({ minimum: 0, default: 5000 }),
    /** No attempt starts later than this after the request arrived. */
    attemptsDeadlineMs: Type.Integer({ minimum: 1, default: 45_000 }),
    /** What a client usually waits (60 s): a deadline is retried on the same model only if another attempt still ends within it. */
    clientBudgetMs: Type.Integer({ minimum: 1, default: 60_000 }),
    /** Consecutive transient failures of one model that start its cool-down. */
    cooldownFailures: Type.Integer({ minimum: 1, default: 3 }),
    /** How long a cooling model is skipped before one probe request may try it. */
    cooldownMs: Type.Integer({ minimum: 1, default: 30_000 }),
  },
  { additionalProperties: false, default: {} },
);
export type UpstreamConfig = Static<typeof upstreamConfig>;

/**
 * Failures of one model that another candidate may not share: worth the next fallback. A safety
 * refusal (`content_filter`) is not routed around; `context_length_exceeded` moves a route on.
 */
export const fallbackCodes = new Set<ErrorCode>([
  'upstream_unavailable',
  'provider_auth_failed',
  'provider_billing',
  'provider_model_not_found',
  'provider_not_configured',
  'provider_rejected_request',
  'context_length_exceeded',
  'stream_interrupted',
]);

/** Worth another attempt on the same model: the adapter's hint, else any `upstream_unavailable`. */
export function isTransient(err: GatewayError): boolean {
  const h = (err as GatewayError & UpstreamFailureHints).transient;
  return h ?? err.code === 'upstream_unavailable';
}

/** A deadline (not an answer) ended the attempt: the time is spent, so the same model is not simply tried again. */
export function isDeadline(err: GatewayError): boolean {
  return (err as GatewayError & UpstreamFailureHints).deadline === true;
}

/**
 * After a deadline on the only candidate left: one more attempt only if another as long still
 * ends within `clientBudgetMs` of the request's arrival (a client's usual 60 s time-out), and
 * only once.
 */
export function retryAfterDeadline(deadlineRetries: number, requestStartedAt: number, attemptStartedAt: number, now: number, clientBudgetMs: number): boolean {
  return deadlineRetries === 0 && now - requestStartedAt + (now - attemptStartedAt) <= clientBudgetMs;
}

/** The wait the vendor asked for, in ms (hint, else `svc.retry_after_seconds`); undefined when none. */
export function requestedWaitMs(err: GatewayError): number | undefined {
  const h = (err as GatewayError & UpstreamFailureHints).retryAfterMs;
  if (h !== undefined) return h;
  const s = err.details?.retry_after_seconds;
  return typeof s === 'number' ? s * 1000 : undefined;
}

/** Exponential backoff with full jitter: a random wait in [0, min(max, base·2^(n-1))]. */
export function backoffMs(retry: number, cfg: Pick<UpstreamConfig, 'backoffMs' | 'maxBackoffMs'>, random = Math.random): number {
  const cap = Math.min(cfg.maxBackoffMs, cfg.backoffMs * 2 ** Math.max(0, retry - 1));
  return Math.round(random() * cap);
}

/** Waits `ms` unless `signal` aborts first (then resolves early; the caller checks the signal). */
export function pause(ms: number, signal: CallSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
