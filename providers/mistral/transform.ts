import { createHash } from 'node:crypto';
import type { ChatCompletion, UpstreamCall } from '../../kernel/index.js';
import { chunkFixer, type VendorQuirks } from '../openai-compatible/quirks.js';
import { fromVendorReply, toVendorRequest } from '../openai-compatible/transform.js';
import { mistralError } from './errors.js';

type Json = Record<string, unknown>;
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Mistral accepts only tool-call ids of exactly 9 letters and digits (its own, e.g. `gSIMJiOkT`);
 * a history with another vendor's ids (`call_abc…`) is refused. Other ids are mapped to 9
 * characters derived from a hash, so a call and its `tool` result still match each other.
 */
export function mistralToolCallId(id: string): string {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  return [...digest.subarray(0, 9)].map((b) => alphabet[b % alphabet.length]).join('');
}

/**
 * Mistral's request: no `stream_options` (422 extra_forbidden; it reports usage in the last chunk
 * unasked), no `name` on messages other than tool results (422 extra_forbidden on
 * `messages.N.user.name`), tool-call ids in its own 9-character form.
 */
export function toMistralRequest(call: Pick<UpstreamCall, 'model' | 'request'>): Json {
  const { stream_options: _unsupported, ...body } = toVendorRequest(call);
  body.messages = (body.messages as Json[]).map((m) => {
    const { name, ...rest } = m;
    const out: Json = m.role === 'tool' && name !== undefined ? { ...rest, name } : rest;
    if (typeof out.tool_call_id === 'string') out.tool_call_id = mistralToolCallId(out.tool_call_id);
    if (Array.isArray(out.tool_calls)) out.tool_calls = (out.tool_calls as Json[]).map((t) => ({ ...t, id: mistralToolCallId(String(t.id)) }));
    return out;
  });
  return body;
}

/**
 * Reasoning models (magistral, fixtures mistral-reasoning*) send `content` as a list of chunks:
 * `thinking` (the model's reasoning, whose tokens are already in `completion_tokens`) and `text`
 * (the answer). The answer is the text chunks joined; the thinking is not content. A string is
 * kept as is; a list with no text chunk (a delta of thinking only) has no content.
 */
export function mistralText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : undefined;
  const texts = content.filter((c): c is Json => isObject(c) && c.type === 'text' && typeof c.text === 'string');
  return texts.length > 0 ? texts.map((c) => c.text as string).join('') : undefined;
}

/** A message or delta with its chunk-list `content` read as text (absent when it held none). */
function withText(m: Json): Json {
  if (!Array.isArray(m.content)) return m;
  const { content, ...rest } = m;
  const text = mistralText(content);
  return text === undefined ? rest : { ...rest, content: text };
}

/** A whole reply: content lists read as text (a reply of thinking only has content null). */
export function fromMistralReply(json: unknown): ChatCompletion | undefined {
  if (!isObject(json) || !Array.isArray(json.choices)) return fromVendorReply(json);
  const choices = json.choices.map((c: unknown) => (isObject(c) && isObject(c.message) ? { ...c, message: withText(c.message) } : c));
  return fromVendorReply({ ...json, choices });
}

/**
 * One chunk: content lists read as text; streamed tool calls, which come whole without `index`
 * and `type` (fixture mistral-tool-call), get both as the wire format requires.
 */
export function fixMistralChunk(json: Json): Json {
  if (!Array.isArray(json.choices)) return json;
  const choices = (json.choices as Json[]).map((c) => {
    if (!isObject(c.delta)) return c;
    const delta = withText(c.delta);
    if (!Array.isArray(delta.tool_calls)) return { ...c, delta };
    const tool_calls = (delta.tool_calls as Json[]).map((t, i) => ({ ...t, index: typeof t.index === 'number' ? t.index : i, type: 'function' }));
    return { ...c, delta: { ...delta, tool_calls } };
  });
  return { ...json, choices };
}

export const mistralQuirks: VendorQuirks = { request: toMistralRequest, reply: fromMistralReply, streamEvent: chunkFixer(fixMistralChunk), error: mistralError };
