import type { StreamItem } from '../openai-compatible/transform.js';
import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { openrouterCheckRefused, openrouterError } from './errors.js';

type Json = Record<string, unknown>;

/**
 * OpenRouter's stream quirks (fixtures openrouter-*.chunks.txt; `: OPENROUTER PROCESSING` comment
 * lines are skipped by the SSE decoder):
 * - the finish chunk is sent twice, the second time with usage: the repeat becomes a usage-only
 *   chunk (`choices: []`), so the client sees one finish_reason;
 * - a provider failing mid-stream arrives inside the HTTP 200 as `finish_reason: "error"` (with or
 *   without a top-level `error`): that is an error event, not a normal end.
 */
export function fixOpenRouterChunk(json: Json, state: Json): Json | StreamItem | null {
  const choices = Array.isArray(json.choices) ? (json.choices as Json[]) : [];
  if (choices.some((c) => c.finish_reason === 'error')) {
    return { kind: 'error', body: { error: { message: 'The upstream provider failed while streaming.', code: 502 } } };
  }
  const finishing = choices.some((c) => typeof c.finish_reason === 'string');
  if (!finishing) return json;
  if (!state.finished) {
    state.finished = true;
    return json;
  }
  return json.usage ? { ...json, choices: [] } : null;
}

export const openrouterQuirks: VendorQuirks = {
  streamEvent: chunkFixer(fixOpenRouterChunk),
  error: openrouterError,
  // GET /models is public: it cannot tell a refused key. GET /key answers 401 for one.
  check: { path: '/key', refused: openrouterCheckRefused },
};
