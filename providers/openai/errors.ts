import { fromVendorError } from '../openai-compatible/errors.js';

/**
 * OpenAI's error bodies are the ones the shared table was built from (providers/README.md §3,
 * fixtures in providers/openai-compatible/__fixtures__/openai-*): `insufficient_quota` on a 429 is
 * billing, `context_length_exceeded`, `model_not_found`, `invalid_api_key`, rate limits with
 * `x-ratelimit-reset-*` headers. Nothing to add; named here so every vendor folder maps its own errors.
 */
export const openaiError = fromVendorError;
