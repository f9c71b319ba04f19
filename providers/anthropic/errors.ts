import { GatewayError, rateLimited, rateLimitWait, scrubVendorText, vendorUnavailable, type UpstreamErrorContext } from '../../kernel/index.js';

/**
 * Anthropic error answers → the spec's codes (providers/README.md §3). Anthropic's body is
 * `{"type":"error","error":{"type":"<kind>_error","message":"…"},"request_id":"req_…"}`; the kind
 * decides, and within `invalid_request_error` (400) the message does: "prompt is too long" is
 * context_length_exceeded and "Your credit balance is too low" is billing, not a bad request.
 */

type Headers = Record<string, string | string[] | undefined>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The HTTP status each error type is sent with (for `event: error` in a stream, which has none). */
const statusByType: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export const statusOfType = (type: string | undefined): number => statusByType[type ?? ''] ?? 500;

/** `{ type, message }` from any body shape (JSON text, object, or plain text from a proxy). */
export function parseAnthropicError(body: unknown): { type: string; message: string } {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return { type: '', message: body.trim() };
    }
  }
  const e = isObject(json) && isObject(json.error) ? json.error : {};
  return { type: typeof e.type === 'string' ? e.type : '', message: typeof e.message === 'string' ? e.message : '' };
}

const contextText = /prompt is too long|exceed context limit|context window|too many tokens/i;
const billingText = /credit balance|billing|purchase credits/i;

/**
 * An Anthropic error answer as a GatewayError.
 *
 * @example
 * anthropicError(529, {}, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', ctx) // upstream_unavailable
 */
export function anthropicError(status: number, headers: Headers, body: unknown, ctx: UpstreamErrorContext): GatewayError {
  const { type, message } = parseAnthropicError(body);
  const p = ctx.provider;
  const said = message ? `: ${scrubVendorText(message, ctx)}` : '.';
  const details = { provider: p };
  if (type === 'billing_error' || status === 402 || (status === 400 && billingText.test(message))) {
    return new GatewayError('provider_billing', `Provider ${p} refused the request because of its account's billing.`, { details });
  }
  if (status === 400 && contextText.test(message)) {
    return new GatewayError('context_length_exceeded', `The messages are too long for the model (provider ${p}${said})`, { param: 'messages' });
  }
  if (type === 'authentication_error' || type === 'permission_error' || status === 401 || status === 403) {
    return new GatewayError('provider_auth_failed', `Provider ${p} refused the service's key; an instance admin must fix it.`, { details });
  }
  if (status === 404 && /^model:/i.test(message)) {
    const model = ctx.upstreamModel ?? '';
    return new GatewayError('provider_model_not_found', `Provider ${p} does not know the model "${model}"; an instance admin must correct the model id.`, {
      details: { provider: p, model },
    });
  }
  if (type === 'rate_limit_error' || status === 429) return rateLimited(ctx, rateLimitWait(headers, undefined, message));
  if (status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 409) {
    return new GatewayError('provider_rejected_request', `Provider ${p} refused the request${said}`);
  }
  return vendorUnavailable(ctx, status);
}

/**
 * A 400 that names a sampling option the model no longer takes ("`temperature` is deprecated for
 * this model", "`temperature` and `top_p` cannot both be specified"): worth one more try without them.
 */
export function refusesSampling(status: number, text: string): boolean {
  if (status !== 400) return false;
  const { message } = parseAnthropicError(text);
  return /\b(temperature|top_p)\b/.test(message) && /deprecated|not supported|cannot both|only one of|unsupported/i.test(message);
}
