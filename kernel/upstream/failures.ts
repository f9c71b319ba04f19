import { GatewayError } from '../errors/index.js';
import type { Usage } from '../contracts/chat.js';
import type { UpstreamFailureHints } from '../contracts/upstream.js';
import { CONNECT_TIMEOUT } from './pool.js';

/**
 * The failures every vendor adapter reports the same way (providers/README.md §3): the spec's
 * codes for transport trouble before and after the first chunk, the scrubbing of vendor text, and
 * the wait after a 429. Vendor-specific body mapping stays in each providers/<vendor>/errors.ts.
 */

/** Who failed: the provider's name, the model id sent, and strings that must never be echoed. */
export interface UpstreamErrorContext {
  provider: string;
  upstreamModel?: string;
  /** The provider's address, host and key: scrubbed from any vendor text repeated. */
  secrets: string[];
}

/** Why a call failed without an HTTP answer (or mid-stream). */
export type UpstreamFailure = 'timeout' | 'idle' | 'connect' | 'reset' | 'malformed' | 'error_event' | 'eof';

const failureText: Record<UpstreamFailure, string> = {
  timeout: 'did not answer in time',
  idle: 'went silent for too long',
  connect: 'could not be reached',
  reset: 'closed the connection',
  malformed: 'sent data that is not a valid reply',
  error_event: 'reported an error',
  eof: 'ended the reply before it was complete',
};

/**
 * A failure before the first chunk: nothing reached the client, so the dispatcher may retry.
 *
 * @example
 * throw upstreamUnavailable(ctx, 'timeout'); // 502 upstream_unavailable, svc { provider }
 */
export function upstreamUnavailable(ctx: UpstreamErrorContext, why: UpstreamFailure): GatewayError & UpstreamFailureHints {
  const err = withHints(new GatewayError('upstream_unavailable', `Provider ${ctx.provider} ${failureText[why]}.`, { details: { provider: ctx.provider } }), true);
  // A deadline spent the client's time: the dispatcher does not spend it again on the same model.
  if (why === 'timeout' || why === 'idle') err.deadline = true;
  return err;
}

/**
 * Sets the retry hints the dispatcher reads from a GatewayError (providers/README.md "Retry
 * hints"): whether another attempt on the same model may succeed, and the vendor's requested wait.
 */
export function withHints<E extends GatewayError>(err: E, transient: boolean, retryAfterMs?: number): E & UpstreamFailureHints {
  return Object.assign(err, retryAfterMs === undefined ? { transient } : { transient, retryAfterMs });
}

/**
 * A vendor's HTTP answer that another attempt may fix or not: 408, 409 and 5xx are transient, a
 * 404 on the endpoint (a wrong address) is not. 502 upstream_unavailable, svc { provider }.
 *
 * @example
 * throw vendorUnavailable(ctx, 529);
 */
export function vendorUnavailable(ctx: UpstreamErrorContext, status: number): GatewayError & UpstreamFailureHints {
  const err = new GatewayError('upstream_unavailable', `Provider ${ctx.provider} is unavailable (HTTP ${status}).`, { details: { provider: ctx.provider } });
  return withHints(err, status !== 404);
}

/**
 * A vendor's rate-limit refusal: 502 upstream_unavailable with `rate_limited` and the wait in
 * `svc`, the Retry-After / retry-after-ms headers (they reach the client when no other attempt
 * answers), and the wait as a retry hint.
 *
 * @example
 * throw rateLimited(ctx, rateLimitWait(headers)); // svc { provider, rate_limited: true, retry_after_seconds }
 */
export function rateLimited(ctx: UpstreamErrorContext, seconds: number): GatewayError & UpstreamFailureHints {
  const err = new GatewayError('upstream_unavailable', `Provider ${ctx.provider} refused the request for its rate limit.`, {
    details: { provider: ctx.provider, rate_limited: true, retry_after_seconds: seconds },
    headers: { 'retry-after': String(seconds), 'retry-after-ms': String(seconds * 1000) },
  });
  return withHints(err, true, seconds * 1000);
}

/**
 * A stream error after its first chunk, with the usage the vendor had reported so far. `promptOnly`:
 * output arrived after the vendor's last report (Anthropic reports input in message_start and
 * output only at the end), so only `usage.prompt_tokens` is the vendor's count for this reply.
 */
export type UpstreamInterrupted = GatewayError & { usage?: Usage; promptOnly?: boolean; reason: UpstreamFailure };

/**
 * A reply that broke off after its first chunk (502 stream_interrupted). `usage` (and `promptOnly`)
 * ride on the error object, not in `svc`: charging what was produced is the dispatcher's job.
 *
 * @example
 * throw streamInterrupted(ctx, 'eof', usage, true);
 */
export function streamInterrupted(ctx: UpstreamErrorContext, why: UpstreamFailure, usage?: Usage, promptOnly = false): UpstreamInterrupted {
  const err = new GatewayError('stream_interrupted', `The reply from provider ${ctx.provider} broke off: it ${failureText[why]}.`, {
    details: { provider: ctx.provider },
  }) as UpstreamInterrupted;
  err.reason = why;
  if (usage) err.usage = usage;
  if (usage && promptOnly) err.promptOnly = true;
  return err;
}

/** Sorts a thrown transport error (the pool's and Node's socket codes) into a failure kind. */
export function transportFailureOf(err: unknown): UpstreamFailure {
  const code = (err as { code?: string } | null)?.code ?? '';
  if (code === CONNECT_TIMEOUT) return 'timeout';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED'].includes(code)) return 'connect';
  return 'reset';
}

/**
 * Vendor text that is repeated to a client: the provider's address and key removed, one line, bounded.
 *
 * @example
 * scrubVendorText('bad key sk-123 at https://x', ctx) // 'bad key [redacted] at [redacted]'
 */
export function scrubVendorText(text: string, ctx: UpstreamErrorContext): string {
  let out = text.replace(/\s+/g, ' ').trim();
  for (const s of ctx.secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out.length > 500 ? `${out.slice(0, 497)}...` : out;
}

/**
 * Seconds to wait after a 429, from the first source that has one: `retry-after-ms`,
 * `Retry-After` (seconds or an HTTP date), a vendor hint in seconds (Gemini's RetryInfo), then
 * "retry in 45.57s" / "try again in 2s" in the message. At least 1, default 1.
 *
 * @example
 * rateLimitWait({ 'retry-after': '7' }) // 7
 */
export function rateLimitWait(headers: Record<string, string | string[] | undefined>, hintSeconds?: number, message = '', now = Date.now()): number {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const up = (s: number) => (Number.isFinite(s) && s > 0 ? Math.max(1, Math.ceil(s)) : undefined);
  const ms = first(headers['retry-after-ms']);
  const fromMs = ms && /^\d+(\.\d+)?$/.test(ms) ? up(Number(ms) / 1000) : undefined;
  const ra = first(headers['retry-after']);
  const fromHeader = ra ? up(/^\d+(\.\d+)?$/.test(ra) ? Number(ra) : (Date.parse(ra) - now) / 1000) : undefined;
  const said = /(?:retry|try again) in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message);
  const fromText = said ? up(Number(said[1]) / (said[2] === 'ms' ? 1000 : 1)) : undefined;
  return fromMs ?? fromHeader ?? (hintSeconds === undefined ? undefined : up(hintSeconds)) ?? fromText ?? 1;
}
