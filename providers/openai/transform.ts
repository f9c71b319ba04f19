import type { UpstreamCall } from '../../kernel/index.js';
import { toVendorRequest } from '../openai-compatible/transform.js';
import type { VendorQuirks } from '../openai-compatible/quirks.js';
import { openaiError } from './errors.js';

/**
 * OpenAI's request body: `max_completion_tokens` instead of the deprecated `max_tokens`, which
 * OpenAI's reasoning models (o1, o3, gpt-5…) refuse with 400 unsupported_parameter (fixture
 * openai-unsupported-parameter); every current OpenAI chat model takes the new field.
 */
export function toOpenAIRequest(call: Pick<UpstreamCall, 'model' | 'request'>): Record<string, unknown> {
  const { max_tokens: max, ...body } = toVendorRequest(call);
  return { ...body, max_completion_tokens: max };
}

export const openaiQuirks: VendorQuirks = { request: toOpenAIRequest, error: openaiError };
