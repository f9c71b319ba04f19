import type { GatewayError } from '../../kernel/index.js';
import { fromVendorError, parseVendorError, type ErrorContext } from '../openai-compatible/errors.js';

type Headers = Record<string, string | string[] | undefined>;

/** xAI answers a wrong key with 400 `{code: "Client specified an invalid argument", error: "Incorrect API key provided: …"}`, not 401. */
const badKey = /incorrect api key|invalid api key|no api key/i;

/**
 * xAI errors: a refused key arrives as a 400 (fixture xai-invalid-api-key). The rest follows the
 * shared table (which reads a 429 as the rate limit whatever its text, fixture xai-rate-limit).
 */
export function xaiError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  const e = parseVendorError(body);
  if (status === 400 && badKey.test(e.message)) return fromVendorError(401, headers, body, ctx);
  return fromVendorError(status, headers, body, ctx);
}

/** The key check (GET /models): a 400 naming the key is a refused key too. */
export function xaiCheckRefused(status: number, body: string): boolean {
  return status === 401 || status === 403 || (status === 400 && badKey.test(parseVendorError(body).message));
}
