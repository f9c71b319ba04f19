import type { GatewayError } from '../../kernel/index.js';
import { fromVendorError, modelNotFound, parseVendorError, type ErrorContext } from '../openai-compatible/errors.js';

type Headers = Record<string, string | string[] | undefined>;

/**
 * DeepSeek's bodies follow OpenAI's shape but its `code` is `invalid_request_error` for most
 * refusals, so the message decides: a model id it does not know is a 400 "Model Not Exist"
 * (fixture deepseek-model-not-exist) → provider_model_not_found; a context overflow is "maximum
 * context length" (fixture deepseek-context-length); "Insufficient Balance" is a 402
 * (provider_billing), "Authentication Fails" a 401 — the shared table reads those.
 */
export function deepseekError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  if (status === 400 && /^model not exist\b/i.test(parseVendorError(body).message)) return modelNotFound(ctx);
  return fromVendorError(status, headers, body, ctx);
}
