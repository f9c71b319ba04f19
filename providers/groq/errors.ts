import { GatewayError } from '../../kernel/index.js';
import { fromVendorError, parseVendorError, type ErrorContext } from '../openai-compatible/errors.js';

type Headers = Record<string, string | string[] | undefined>;

/**
 * Groq's 413 "Request too large for model … on tokens per minute (TPM): Limit 6000, Requested
 * 14368" carries code `rate_limit_exceeded`, but waiting does not help: the request alone exceeds
 * the account's per-minute allowance. It is `upstream_unavailable` without `rate_limited` (another
 * model may take it; no retry_after_seconds is promised). A 429 ("Please try again in 1.98s") is
 * an ordinary rate limit with the wait read from `retry-after` or the message (shared table).
 */
export function groqError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  const e = parseVendorError(body);
  if (status === 413 && e.code === 'rate_limit_exceeded') {
    return new GatewayError('upstream_unavailable', `Provider ${ctx.provider} refused the request: it is larger than the account's tokens-per-minute limit allows.`, {
      details: { provider: ctx.provider },
    });
  }
  return fromVendorError(status, headers, body, ctx);
}
