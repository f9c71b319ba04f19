import { GatewayError, rateLimited, rateLimitWait, scrubVendorText, vendorUnavailable, type UpstreamErrorContext } from '../../kernel/index.js';

/**
 * Gemini error answers → the spec's codes (providers/README.md §3). Gemini's body is Google's
 * `{"error":{"code","message","status","details":[…]}}`. A bad key is a 400 (`API_KEY_INVALID`
 * in an ErrorInfo detail), a 429 carries its wait only in the body (`RetryInfo.retryDelay`, and
 * "Please retry in 45.57s" in the message), and a replayed Gemini 3 tool call without its thought
 * signature is a 400 that deserves a clear explanation.
 */

type Headers = Record<string, string | string[] | undefined>;
type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface GeminiError {
  message: string;
  status: string;
  reasons: string[];
  /** RetryInfo.retryDelay in seconds. */
  retryDelay?: number;
}

/** The useful fields of any body shape (JSON text, object, an array around it, or plain text). */
export function parseGeminiError(body: unknown): GeminiError {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return { message: body.trim(), status: '', reasons: [] };
    }
  }
  if (Array.isArray(json)) json = json[0];
  const e = isObject(json) && isObject(json.error) ? json.error : {};
  const details = Array.isArray(e.details) ? e.details.filter(isObject) : [];
  const out: GeminiError = {
    message: typeof e.message === 'string' ? e.message : '',
    status: typeof e.status === 'string' ? e.status : '',
    reasons: details.map((d) => d.reason).filter((r): r is string => typeof r === 'string'),
  };
  const delay = details.map((d) => d.retryDelay).find((d): d is string => typeof d === 'string');
  if (delay && /^\d+(\.\d+)?s$/.test(delay)) out.retryDelay = Number(delay.slice(0, -1));
  return out;
}

/** Whether an answer means the key was refused (for `check()` as well as calls). */
export function keyRefused(status: number, body: unknown): boolean {
  if (status === 401 || status === 403) return true;
  const e = parseGeminiError(body);
  return status === 400 && (e.reasons.includes('API_KEY_INVALID') || /api key not valid|api key expired/i.test(e.message));
}

const contextText = /input token count.*exceeds|exceeds the maximum number of tokens|context window|too many tokens/i;
const billingText = /billing|prepay|credits? (are|is) depleted|free tier is not available/i;

/**
 * A Gemini error answer as a GatewayError.
 *
 * @example
 * geminiError(429, {}, recordedBody, ctx) // upstream_unavailable, svc { provider, rate_limited: true, retry_after_seconds: 35 }
 */
export function geminiError(status: number, headers: Headers, body: unknown, ctx: UpstreamErrorContext): GatewayError {
  const e = parseGeminiError(body);
  const p = ctx.provider;
  const said = e.message ? `: ${scrubVendorText(e.message, ctx)}` : '.';
  const details = { provider: p };
  if (status === 429 || e.status === 'RESOURCE_EXHAUSTED') return rateLimited(ctx, rateLimitWait(headers, e.retryDelay, e.message));
  if (status >= 400 && status < 500 && billingText.test(e.message)) {
    return new GatewayError('provider_billing', `Provider ${p} refused the request because of its account's billing.`, { details });
  }
  if (keyRefused(status, body) || e.status === 'UNAUTHENTICATED' || e.status === 'PERMISSION_DENIED') {
    return new GatewayError('provider_auth_failed', `Provider ${p} refused the service's key; an instance admin must fix it.`, { details });
  }
  if (status === 400 && contextText.test(e.message)) {
    return new GatewayError('context_length_exceeded', `The messages are too long for the model (provider ${p}${said})`, { param: 'messages' });
  }
  if (status === 400 && /thought_signature/i.test(e.message)) {
    return new GatewayError(
      'provider_rejected_request',
      `Provider ${p} refused the conversation's earlier tool calls: this Gemini model needs each call sent back with the tool_call id it returned, unchanged (calls made by another model cannot be replayed to it).`,
      { param: 'messages' },
    );
  }
  if (status === 404 && (e.status === 'NOT_FOUND' || /models\/.*not found/i.test(e.message)) && /model/i.test(e.message)) {
    const model = ctx.upstreamModel ?? '';
    return new GatewayError('provider_model_not_found', `Provider ${p} does not know the model "${model}"; an instance admin must correct the model id.`, {
      details: { provider: p, model },
    });
  }
  if (status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 409) {
    return new GatewayError('provider_rejected_request', `Provider ${p} refused the request${said}`);
  }
  return vendorUnavailable(ctx, status);
}
