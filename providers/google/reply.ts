import { oneChoiceCompletion, vendorCount, usageOf, type ChatCompletion, type FinishReason, type ToolCall, type UpstreamErrorContext, type Usage } from '../../kernel/index.js';
import { geminiError } from './errors.js';
import { toolCallId } from './tool-ids.js';

/** Gemini `GenerateContentResponse` → Chat Completions (pure); shared by whole replies and stream chunks. */

type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Finish reasons that mean a safety or policy stop. */
const filtered = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * finishReason → finish_reason. Gemini ends tool calls with STOP, so a reply with function calls
 * finishes `tool_calls`; safety and policy stops are `content_filter`; anything else ends as `stop`.
 */
export function finishOf(reason: unknown, hasCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && filtered.has(reason)) return 'content_filter';
  return hasCalls ? 'tool_calls' : 'stop';
}

/**
 * usageMetadata → usage. Prompt includes tool-use prompt tokens (cached ones are already inside
 * promptTokenCount); thinking tokens are counted outside candidatesTokenCount, so they are added
 * to completion and reported as reasoning.
 */
export function usageFrom(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  const cached = vendorCount(u.cachedContentTokenCount);
  const thoughts = vendorCount(u.thoughtsTokenCount);
  return usageOf(vendorCount(u.promptTokenCount) + vendorCount(u.toolUsePromptTokenCount), vendorCount(u.candidatesTokenCount) + thoughts, cached > 0 ? cached : undefined, thoughts > 0 ? thoughts : undefined);
}

/** What one response (a whole reply or one stream chunk) holds for choice 0. */
export interface GeminiPiece {
  id: string;
  model: string;
  text: string;
  calls: ToolCall[];
  /** The candidate's raw finishReason, or `BLOCKED` when the prompt itself was blocked. */
  finish: string | undefined;
  usage: Usage | undefined;
}

/** Reads one response; undefined when it is not a GenerateContentResponse. */
export function readPiece(json: unknown): GeminiPiece | undefined {
  if (!isObject(json) || (!Array.isArray(json.candidates) && !isObject(json.promptFeedback) && !isObject(json.usageMetadata))) return undefined;
  const candidate = Array.isArray(json.candidates) && isObject(json.candidates[0]) ? json.candidates[0] : undefined;
  const parts = isObject(candidate?.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts.filter(isObject) : [];
  // Thought summaries (`thought: true`) are the model's reasoning, not its answer.
  const text = parts.filter((p) => typeof p.text === 'string' && p.thought !== true).map((p) => p.text as string).join('');
  const calls: ToolCall[] = parts
    .filter((p) => isObject(p.functionCall))
    .map((p) => {
      const fc = p.functionCall as Json;
      return { id: toolCallId(str(fc.id), str(p.thoughtSignature)), type: 'function', function: { name: str(fc.name) ?? '', arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}) } };
    });
  // A blocked prompt is HTTP 200 with promptFeedback.blockReason and no candidates.
  const blocked = !candidate && isObject(json.promptFeedback) && typeof json.promptFeedback.blockReason === 'string';
  return { id: str(json.responseId) ?? '', model: str(json.modelVersion) ?? '', text, calls, finish: blocked ? 'BLOCKED' : str(candidate?.finishReason), usage: usageFrom(json.usageMetadata) };
}

/**
 * Older Gemini models answer a replayed tool call that lacks its signature with HTTP 200 and this
 * finish reason instead of the 400 newer ones send; both are the same refusal.
 */
export const missingSignature = 'MISSING_THOUGHT_SIGNATURE';
export const missingSignatureBody = { error: { code: 400, message: `Function call is missing a thought_signature (finishReason ${missingSignature}).`, status: 'INVALID_ARGUMENT' } };

/** A whole reply as a ChatCompletion, undefined when the JSON is not one; throws the signature refusal. */
export function fromGeminiReply(json: unknown, ctx?: UpstreamErrorContext): ChatCompletion | undefined {
  const piece = readPiece(json);
  if (!piece) return undefined;
  if (piece.finish === missingSignature && ctx) throw geminiError(400, {}, missingSignatureBody, ctx);
  const finish = piece.finish === 'BLOCKED' ? 'content_filter' : finishOf(piece.finish, piece.calls.length > 0);
  const head = { id: piece.id, model: piece.model, created: Math.floor(Date.now() / 1000) };
  return oneChoiceCompletion(head, piece.text === '' && piece.calls.length > 0 ? null : piece.text, piece.calls, finish, piece.usage);
}
