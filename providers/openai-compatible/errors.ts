import { GatewayError, streamInterrupted, type UpstreamFailure, type UpstreamFailureHints, type Usage } from '../../kernel/index.js';

/**
 * Vendor error status + body → GatewayError with the spec's codes. The rules come from real
 * bodies recorded in __fixtures__ (OpenAI, vLLM, llama.cpp server, Ollama, OpenRouter); see
 * providers/README.md for the table. Messages name the provider, never its address or key.
 */

/** Who failed: the provider's name, the model id sent, and strings that must never be echoed. */
export interface ErrorContext {
  provider: string;
  upstreamModel?: string;
  /** The provider's address, host and key: scrubbed from any vendor text we repeat. */
  secrets: string[];
}

/** The useful fields of any vendor error body shape. */
export interface VendorError {
  message: string;
  type?: string;
  code?: string;
  /** A numeric `code` (vLLM, llama.cpp and OpenRouter put the HTTP status there). */
  status?: number;
  param?: string;
}

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Reads the shapes seen in the wild: `{error:{message,type,param,code}}` (OpenAI, vLLM ≥0.6,
 * llama.cpp, Ollama /v1, OpenRouter), `{object:"error",message,…}` (vLLM legacy),
 * `{error:"text"}` (Ollama native), `{message}` / `{detail}`, or plain text.
 */
export function parseVendorError(body: unknown): VendorError {
  let json: unknown = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return { message: body.trim() };
    }
  }
  if (!isObject(json)) return { message: typeof body === 'string' ? body.trim() : '' };
  const e: Json = isObject(json.error) ? json.error : json;
  const message = str(e.message) ?? str(json.error) ?? str(e.detail) ?? '';
  const out: VendorError = { message };
  const type = str(e.type);
  if (type) out.type = type;
  if (typeof e.code === 'number') out.status = e.code;
  else if (str(e.code)) out.code = e.code as string;
  if (str(e.param)) out.param = e.param as string;
  return out;
}

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** "1m30.5s", "20ms", "6s", "2h" (OpenAI's reset headers and messages) or plain seconds → seconds. */
export function durationSeconds(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== t.replace(/\s+/g, '')) return undefined;
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

/**
 * Seconds to wait after a vendor's 429: retry-after-ms, Retry-After (seconds or HTTP date),
 * x-ratelimit-reset(-requests|-tokens), then "try again in …" in the message; at least 1.
 */
export function retryAfterSeconds(headers: Headers, message = '', now = Date.now()): number {
  const up = (s: number | undefined): number | undefined => (s === undefined || !Number.isFinite(s) ? undefined : Math.max(1, Math.ceil(s)));
  const ms = header(headers, 'retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return up(Number(ms) / 1000)!;
  const ra = header(headers, 'retry-after');
  if (ra) {
    const secs = /^\d+(\.\d+)?$/.test(ra.trim()) ? Number(ra) : (Date.parse(ra) - now) / 1000;
    const s = up(secs);
    if (s !== undefined) return s;
  }
  const resets = ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens', 'x-ratelimit-reset']
    .map((n) => header(headers, n))
    .filter((v): v is string => !!v)
    .map((v) => {
      const s = durationSeconds(v);
      return s !== undefined && s > 1e9 ? s - now / 1000 : s; // an epoch timestamp
    })
    .filter((s): s is number => s !== undefined);
  if (resets.length > 0) return up(Math.max(...resets))!;
  const hint = /try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)/i.exec(message);
  return (hint && up(durationSeconds(hint[1]!))) || 1;
}

/** Vendor text we repeat: secrets removed, one line, bounded. */
export function scrub(text: string, ctx: ErrorContext): string {
  let out = text.replace(/\s+/g, ' ').trim();
  for (const s of ctx.secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out.length > 500 ? `${out.slice(0, 497)}...` : out;
}

const contextText = /maximum context length|context length|context size|context window|prompt is too long|input length exceeds|too many tokens/i;
const filterText = /content management policy|safety system|content policy|usage guidelines/i;
const billingText = /billing|insufficient[_ ](quota|credits?|balance|funds)|exceeded your current quota|more credits|credit balance|payment required/i;
const modelText = /model\b.*\b(does not exist|not found|is not available)|no such model|unknown model/i;

/** The spec code a vendor error means (before it is dressed with messages and details). */
export type Kind = 'context' | 'filter' | 'rejected' | 'auth' | 'billing' | 'model' | 'rate' | 'unavailable';

/** Classifies a vendor error by status, code, type and (last) message. */
export function classify(status: number, e: VendorError): Kind {
  const code = e.code ?? '';
  const type = e.type ?? '';
  // A 429 is always the rate limit, whatever its text says ("Too many tokens for team …" at xAI).
  const client = status >= 400 && status < 500 && status !== 429;
  if (code === 'rate_limit_exceeded') return 'rate';
  if (status === 402 || code === 'insufficient_quota' || type === 'insufficient_quota' || billingText.test(e.message)) return 'billing';
  if (code === 'context_length_exceeded' || type === 'exceed_context_size_error' || (client && contextText.test(e.message))) return 'context';
  if (code === 'content_filter' || code === 'content_policy_violation' || (client && filterText.test(e.message))) return 'filter';
  if (status === 401 || status === 403 || code === 'invalid_api_key') return 'auth';
  if (code === 'model_not_found' || (status === 404 && (/notfound|not_found/i.test(type) || modelText.test(e.message))) || (status === 400 && modelText.test(e.message))) return 'model';
  if (status === 429) return 'rate';
  if (client && status !== 404 && status !== 408 && status !== 409) return 'rejected';
  return 'unavailable';
}

/**
 * An HTTP error answer (status ≠ 2xx, or an error event before the first chunk) as a GatewayError.
 *
 * @example
 * fromVendorError(429, { 'retry-after': '7' }, body, ctx) // upstream_unavailable, svc { provider, rate_limited: true, retry_after_seconds: 7 }
 */
export function fromVendorError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  const e = parseVendorError(body);
  const p = ctx.provider;
  const said = e.message ? `: ${scrub(e.message, ctx)}` : '.';
  switch (classify(status, e)) {
    case 'context':
      return new GatewayError('context_length_exceeded', `The messages are too long for the model (provider ${p}${said})`, { param: 'messages' });
    case 'filter':
      return new GatewayError('content_filter', `The safety system of provider ${p} refused the request${said}`);
    case 'rejected':
      return new GatewayError('provider_rejected_request', `Provider ${p} refused the request${said}`, { param: e.param ? scrub(e.param, ctx) : null });
    case 'auth':
      return new GatewayError('provider_auth_failed', `Provider ${p} refused the service's key; an instance admin must fix it.`, { details: { provider: p } });
    case 'billing':
      return new GatewayError('provider_billing', `Provider ${p} refused the request because of its account's billing.`, { details: { provider: p } });
    case 'model':
      return modelNotFound(ctx);
    case 'rate': {
      const retry = retryAfterSeconds(headers, e.message);
      const waitMs = retryAfterMs(headers) ?? retry * 1000;
      const err = new GatewayError('upstream_unavailable', `Provider ${p} refused the request for its rate limit.`, {
        details: { provider: p, rate_limited: true, retry_after_seconds: retry },
        headers: { 'retry-after': String(retry), 'retry-after-ms': String(waitMs) },
      });
      return hinted(err, true, waitMs);
    }
    default:
      // 408, 409 and 5xx are worth another attempt; a 404 on the endpoint is not (the address is wrong).
      return hinted(new GatewayError('upstream_unavailable', `Provider ${p} is unavailable (HTTP ${status}).`, { details: { provider: p } }), status !== 404);
  }
}

/** A model id the provider does not know: 502 provider_model_not_found naming the provider and the id sent (SPEC.md). */
export function modelNotFound(ctx: ErrorContext): GatewayError {
  const model = ctx.upstreamModel ?? '';
  return new GatewayError('provider_model_not_found', `Provider ${ctx.provider} does not know the model "${model}"; an instance admin must correct the model id.`, {
    details: { provider: ctx.provider, model },
  });
}

/** The vendor's requested wait in ms, from `retry-after-ms` or a numeric `Retry-After`; undefined when it named none. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const ra = header(headers, 'retry-after');
  if (ra && /^\d+(\.\d+)?$/.test(ra.trim())) return Math.ceil(Number(ra) * 1000);
  return undefined;
}

/** Attaches the dispatcher's retry hints (kernel UpstreamFailureHints) to an error. */
export function hinted<T extends GatewayError>(err: T, transient: boolean, retryAfterMs?: number): T & UpstreamFailureHints {
  const h = err as T & UpstreamFailureHints;
  h.transient = transient;
  if (retryAfterMs !== undefined) h.retryAfterMs = retryAfterMs;
  return h;
}

/** Why a call failed without an HTTP answer (or mid-stream). */
export type Failure = UpstreamFailure;

const failureText: Record<Failure, string> = {
  timeout: 'did not answer in time',
  idle: 'went silent for too long',
  connect: 'could not be reached',
  reset: 'closed the connection',
  malformed: 'sent data that is not a valid reply',
  error_event: 'reported an error',
  eof: 'ended the reply before it was complete',
};

/** Transport and protocol failures before the first chunk: nothing was sent to the client, so it is retryable. */
export function unavailable(ctx: ErrorContext, why: Failure, cause?: unknown): GatewayError {
  const err = hinted(new GatewayError('upstream_unavailable', `Provider ${ctx.provider} ${failureText[why]}.`, { details: { provider: ctx.provider }, cause }), true);
  // A deadline spent the client's time: the dispatcher does not spend it again on the same model.
  if (why === 'timeout' || why === 'idle') (err as GatewayError & UpstreamFailureHints).deadline = true;
  return err;
}

/** A stream error after its first chunk: what it is and the usage reported so far, if any (kernel UpstreamInterrupted). */
export type StreamInterrupted = GatewayError & { usage?: Usage; promptOnly?: boolean; reason: Failure };

/**
 * A reply that broke off after its first chunk: the kernel's `streamInterrupted`. `usage` (what the
 * provider had reported) and `promptOnly` (output came after that report) ride on the error
 * object, not in `svc`: charging what was produced is the dispatcher's job.
 */
export const interrupted: (ctx: ErrorContext, why: Failure, usage?: Usage, promptOnly?: boolean) => StreamInterrupted = streamInterrupted;

/** Sorts a thrown transport error (undici / Node socket codes) into a Failure: the kernel's rule. */
export { transportFailureOf as transportFailure } from '../../kernel/index.js';
