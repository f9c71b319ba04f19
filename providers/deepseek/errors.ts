import { fromVendorError } from '../openai-compatible/errors.js';

/**
 * DeepSeek's bodies follow OpenAI's shape but its `code` is `invalid_request_error` for most
 * refusals: a context overflow is recognisable only by "maximum context length" in the message
 * (fixture deepseek-context-length), "Insufficient Balance" is a 402 (provider_billing),
 * "Authentication Fails" a 401. The shared table already reads messages for these, so this is it.
 */
export const deepseekError = fromVendorError;
