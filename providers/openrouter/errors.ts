import { GatewayError } from '../../kernel/index.js';
import { fromVendorError, modelNotFound, parseVendorError, type ErrorContext } from '../openai-compatible/errors.js';

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function metadataOf(body: unknown): Json | undefined {
  let json = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return isObject(json) && isObject(json.error) && isObject(json.error.metadata) ? json.error.metadata : undefined;
}

/**
 * OpenRouter errors: `{error: {message, code: <HTTP status>, metadata}}`. `metadata.raw` holds the
 * upstream provider's own body: never repeated (it may echo the prompt). A 403 whose metadata
 * carries moderation `reasons`/`flagged_input` is a safety refusal (content_filter), not a key
 * problem. 402 "more credits" is billing; 401 "No auth credentials found"/"User not found" a
 * refused key (shared table). A model id it does not know is a 400 "<id> is not a valid model ID"
 * (fixture openrouter-invalid-model) → provider_model_not_found.
 */
export function openrouterError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  const meta = metadataOf(body);
  if (status === 403 && meta && ('reasons' in meta || 'flagged_input' in meta)) {
    return new GatewayError('content_filter', `The moderation of provider ${ctx.provider} refused the request.`);
  }
  if (status === 400 && /is not a valid model id/i.test(parseVendorError(body).message)) return modelNotFound(ctx);
  return fromVendorError(status, headers, body, ctx);
}

/** GET {address}/key: 401 (or 403) means the key was refused. */
export function openrouterCheckRefused(status: number): boolean {
  return status === 401 || status === 403;
}
