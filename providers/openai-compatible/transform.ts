import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ContentPart,
  ToolCall,
  UpstreamCall,
  Usage,
} from '../../kernel/index.js';

/**
 * Pure mapping between the service's normalized objects and the Chat Completions wire format as
 * OpenAI-compatible servers speak it (OpenAI, vLLM, llama.cpp server, Ollama's /v1, LM Studio…).
 * Only fields the spec forwards are written; vendor extras in replies are dropped.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function part(p: ContentPart): ContentPart {
  if (p.type === 'text') return { type: 'text', text: p.text };
  if (p.type === 'image_url') {
    const image_url: { url: string; detail?: 'auto' | 'low' | 'high' } = { url: p.image_url.url };
    if (p.image_url.detail) image_url.detail = p.image_url.detail;
    return { type: 'image_url', image_url };
  }
  const file: { filename?: string; file_data?: string } = {};
  if (p.file.filename !== undefined) file.filename = p.file.filename;
  if (p.file.file_data !== undefined) file.file_data = p.file.file_data;
  return { type: 'file', file };
}

function toolCall(t: ToolCall): ToolCall {
  return { id: t.id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments } };
}

/** Whether `m` holds a role other than developer and text content, and no other member. */
function plainMessage(m: ChatMessage): boolean {
  if (typeof m.content !== 'string' || m.role === 'developer') return false;
  for (const k in m) if (k !== 'role' && k !== 'content') return false;
  return true;
}

/** One message with only the wire fields (a client's unknown fields never reach the provider). */
export function vendorMessage(m: ChatMessage): Json {
  // A plain message (role and text, nothing else) is sent as it is, not copied.
  if (plainMessage(m)) return m as unknown as Json;
  // Self-run servers (older vLLM, llama.cpp, Ollama) reject the newer `developer` role; it means
  // the same as `system` to every Chat-Completions-compatible model.
  const out: Json = { role: m.role === 'developer' ? 'system' : m.role, content: Array.isArray(m.content) ? m.content.map(part) : m.content };
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_calls && m.tool_calls.length > 0) out.tool_calls = m.tool_calls.map(toolCall);
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  return out;
}

/**
 * The vendor request body. `model` is the provider's own id; `max_tokens` is always set (the
 * output hold relies on it); streams always ask for usage, which accounting needs even when the
 * client did not ask for it (the dispatcher drops the usage chunk then).
 *
 * @example
 * toVendorRequest({ model, request: { ...req, maxTokens: 512 }, signal }) // { model: 'llama3:8b', …, max_tokens: 512 }
 */
export function toVendorRequest(call: Pick<UpstreamCall, 'model' | 'request'>): Json {
  const r = call.request;
  const body: Json = { model: call.model.upstreamId, messages: r.messages.map(vendorMessage), max_tokens: r.maxTokens };
  if (r.temperature !== undefined) body.temperature = r.temperature;
  if (r.top_p !== undefined) body.top_p = r.top_p;
  if (r.stop !== undefined) body.stop = r.stop;
  if (r.tools !== undefined && r.tools.length > 0) body.tools = r.tools;
  if (r.tool_choice !== undefined) body.tool_choice = r.tool_choice;
  body.stream = r.stream;
  if (r.stream) body.stream_options = { include_usage: true };
  return body;
}

/** Usage with integer counts, or undefined when the vendor sent none. */
export function normalizeUsage(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  const prompt = int(u.prompt_tokens);
  const completion = int(u.completion_tokens);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: int(u.total_tokens) || prompt + completion };
  const cached = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') usage.prompt_tokens_details = { cached_tokens: int(cached) };
  const reasoning = isObject(u.completion_tokens_details) ? u.completion_tokens_details.reasoning_tokens : undefined;
  if (typeof reasoning === 'number') usage.completion_tokens_details = { reasoning_tokens: int(reasoning) };
  return usage;
}

type FinishReason = ChatCompletion['choices'][number]['finish_reason'];
const finishReasons = new Set(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);
const finish = (v: unknown): FinishReason => (typeof v === 'string' && finishReasons.has(v) ? (v as FinishReason) : v == null ? null : 'stop');

function replyToolCalls(v: unknown): ToolCall[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.filter(isObject).map((t) => {
    const fn = isObject(t.function) ? t.function : {};
    const args = fn.arguments;
    return { id: str(t.id) ?? '', type: 'function', function: { name: str(fn.name) ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
  });
}

const nonNegativeInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const stringOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

/** Whether `o` has no keys but `allowed` (and every key of `required`). */
function onlyKeys(o: Json, allowed: ReadonlySet<string>, required: number): boolean {
  let n = 0;
  for (const k in o) {
    if (!allowed.has(k)) return false;
    n++;
  }
  return n >= required;
}

const replyKeys = new Set(['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint']);
const choiceKeys = new Set(['index', 'message', 'finish_reason', 'logprobs']);
const messageKeys = new Set(['role', 'content', 'refusal', 'tool_calls']);
const usageKeys = new Set(['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_tokens_details', 'completion_tokens_details']);
const cachedKeys = new Set(['cached_tokens']);
const reasoningKeys = new Set(['reasoning_tokens']);
const callKeys = new Set(['id', 'type', 'function']);
const functionKeys = new Set(['name', 'arguments']);

/** Absent, or an object of exactly one non-negative integer member (what normalizeUsage keeps of the details). */
function normalDetail(d: unknown, keys: ReadonlySet<string>, key: string): boolean {
  return d === undefined || (isObject(d) && onlyKeys(d, keys, 1) && nonNegativeInt(d[key]));
}

function normalUsage(u: unknown): boolean {
  if (!isObject(u) || !onlyKeys(u, usageKeys, 3) || !nonNegativeInt(u.prompt_tokens) || !nonNegativeInt(u.completion_tokens) || !nonNegativeInt(u.total_tokens)) return false;
  if (!normalDetail(u.prompt_tokens_details, cachedKeys, 'cached_tokens') || !normalDetail(u.completion_tokens_details, reasoningKeys, 'reasoning_tokens')) return false;
  // normalizeUsage fills a zero total from the parts.
  return (u.total_tokens as number) > 0 || (u.prompt_tokens as number) + (u.completion_tokens as number) === 0;
}

function normalCall(t: unknown): boolean {
  return isObject(t) && onlyKeys(t, callKeys, 3) && typeof t.id === 'string' && t.type === 'function' && isObject(t.function) && onlyKeys(t.function, functionKeys, 2) && typeof t.function.name === 'string' && typeof t.function.arguments === 'string';
}

function normalChoice(c: unknown): boolean {
  if (!isObject(c) || !onlyKeys(c, choiceKeys, 4) || typeof c.index !== 'number' || c.logprobs !== null) return false;
  if (c.finish_reason !== null && !finishReasons.has(c.finish_reason as string)) return false;
  const m = c.message;
  if (!isObject(m) || m.role !== 'assistant' || !onlyKeys(m, messageKeys, 3) || !stringOrNull(m.content) || !stringOrNull(m.refusal)) return false;
  // Both present (the copy writes null for either when missing).
  if (m.content === undefined || m.refusal === undefined) return false;
  if (m.tool_calls === undefined) return true;
  return Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && m.tool_calls.every(normalCall);
}

/**
 * Whether a parsed reply already is what fromVendorReply would build from it (the same members and
 * values, in whatever order): it is then used as parsed. Building a copy of a reply that needed
 * no change was about 0.5 KB of garbage a reply.
 */
function isNormalReply(json: Json): boolean {
  if (!onlyKeys(json, replyKeys, 5) || typeof json.id !== 'string' || json.object !== 'chat.completion' || !nonNegativeInt(json.created) || typeof json.model !== 'string') return false;
  if (json.system_fingerprint !== undefined && typeof json.system_fingerprint !== 'string') return false;
  if (json.usage !== undefined && !normalUsage(json.usage)) return false;
  const choices = json.choices as unknown[];
  for (let i = 0; i < choices.length; i++) if (!normalChoice(choices[i])) return false;
  return true;
}

/** A vendor's whole reply as a ChatCompletion, or undefined when it is not one. */
export function fromVendorReply(json: unknown): ChatCompletion | undefined {
  if (!isObject(json) || !Array.isArray(json.choices)) return undefined;
  if (isNormalReply(json)) return json as unknown as ChatCompletion;
  const choices = json.choices.filter(isObject).map((c, i) => {
    const m = isObject(c.message) ? c.message : {};
    // `refusal` is required by the wire schema (null when none), though most servers omit it.
    const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: str(m.content) ?? null, refusal: str(m.refusal) ?? null };
    const calls = replyToolCalls(m.tool_calls);
    if (calls) message.tool_calls = calls;
    return { index: typeof c.index === 'number' ? c.index : i, message, finish_reason: finish(c.finish_reason), logprobs: null };
  });
  const out: ChatCompletion = {
    id: str(json.id) ?? '',
    object: 'chat.completion',
    created: int(json.created),
    model: str(json.model) ?? '',
    choices,
  };
  const usage = normalizeUsage(json.usage);
  if (usage) out.usage = usage;
  if (typeof json.system_fingerprint === 'string') out.system_fingerprint = json.system_fingerprint;
  return out;
}

type Delta = ChatCompletionChunk['choices'][number]['delta'];

function deltaToolCalls(v: unknown): Delta['tool_calls'] {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.filter(isObject).map((t, i) => {
    const out: NonNullable<Delta['tool_calls']>[number] = { index: typeof t.index === 'number' ? t.index : i };
    if (typeof t.id === 'string') out.id = t.id;
    if (t.type === 'function') out.type = 'function';
    if (isObject(t.function)) {
      const fn: { name: string; arguments: string } = { name: str(t.function.name) ?? '', arguments: str(t.function.arguments) ?? '' };
      out.function = fn;
    }
    return out;
  });
}

/** A vendor chunk object as a ChatCompletionChunk. */
export function toChunk(json: Json): ChatCompletionChunk {
  const choices = (Array.isArray(json.choices) ? json.choices : []).filter(isObject).map((c, i) => {
    const d = isObject(c.delta) ? c.delta : {};
    const delta: Delta = {};
    if (d.role === 'assistant') delta.role = 'assistant';
    if (typeof d.content === 'string') delta.content = d.content;
    if (typeof d.refusal === 'string') delta.refusal = d.refusal;
    const calls = deltaToolCalls(d.tool_calls);
    if (calls) delta.tool_calls = calls;
    return { index: typeof c.index === 'number' ? c.index : i, delta, finish_reason: finish(c.finish_reason), logprobs: null };
  });
  const chunk: ChatCompletionChunk = { id: str(json.id) ?? '', object: 'chat.completion.chunk', created: int(json.created), model: str(json.model) ?? '', choices };
  const usage = normalizeUsage(json.usage);
  if (usage) chunk.usage = usage;
  return chunk;
}

/** What one SSE `data:` payload of a Chat Completions stream means. */
export type StreamItem =
  | { kind: 'done' }
  | { kind: 'chunk'; chunk: ChatCompletionChunk }
  | { kind: 'error'; body: Json }
  | { kind: 'malformed' };

/**
 * Reads one SSE `data:` payload: `[DONE]` ends the stream, `{"error":…}` (or vLLM's legacy
 * `{"object":"error",…}`) is an error event, anything else must be a chunk object.
 */
export function readStreamData(data: string): StreamItem {
  const text = data.trim();
  if (text === '[DONE]') return { kind: 'done' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'malformed' };
  }
  if (!isObject(json)) return { kind: 'malformed' };
  if ((json.error !== undefined && json.error !== null) || json.object === 'error') return { kind: 'error', body: json };
  if (!Array.isArray(json.choices) && !isObject(json.usage)) return { kind: 'malformed' };
  return { kind: 'chunk', chunk: toChunk(json) };
}

/**
 * One SSE event of a stream. llama.cpp's `error:` line (event `error`) carries the error object
 * itself rather than `{error: …}`; it is an error event whatever its body.
 */
export function readStreamEvent(event: string, data: string): StreamItem {
  const item = readStreamData(data);
  if (event !== 'error' || item.kind === 'error' || item.kind === 'done') return item;
  let body: unknown = data;
  try {
    body = JSON.parse(data);
  } catch {
    // a bare text error line
  }
  return { kind: 'error', body: { error: body } };
}
