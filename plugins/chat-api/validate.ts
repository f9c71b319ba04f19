import { GatewayError, type ChatMessage, type ChatRequest, type ContentPart, type RequestNeeds, type ToolDefinition } from '../../kernel/index.js';
import { normalizeParts, type AttachmentLimits } from './attachments.js';

const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const toolName = /^[a-zA-Z0-9_-]{1,64}$/;
/** Larger values are refused rather than forwarded: no model takes more output than this. */
const maxTokensCeiling = 10_000_000;
/**
 * Tool parameters are the one client JSON forwarded as is. JSON.stringify recurses, so a schema
 * nested a few thousand deep would throw while the upstream body is written (and read as a
 * provider failure); no real schema comes near this depth.
 */
const maxSchemaDepth = 64;

type Json = Record<string, unknown>;

/** What one request may carry (README "Limits"): attachments, and how many messages and tools. */
export interface ValidationLimits extends AttachmentLimits {
  maxMessages: number;
  maxTools: number;
}

function bad(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when `v` nests objects or arrays deeper than `max`; iterative, so any depth is safe to check. */
function nestedDeeperThan(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, depth + 1]);
  }
  return false;
}

function optionalNumber(body: Json, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw bad(key, `${key} must be a number from ${min} to ${max}.`);
  return v;
}

function optionalInteger(body: Json, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > maxTokensCeiling) throw bad(key, `${key} must be a positive integer.`);
  return v;
}

/** The spec's explicit refusals (SPEC.md "Refused with 400 invalid_request"). */
function refuseUnsupported(body: Json): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw bad('n', 'Only one reply per request is supported: n must be 1.');
  if (body.functions !== undefined) throw bad('functions', 'The legacy functions field is not supported; use tools.');
  if (body.function_call !== undefined) throw bad('function_call', 'The legacy function_call field is not supported; use tool_choice.');
  const rf = body.response_format;
  if (rf !== undefined && rf !== null && !(isObject(rf) && rf.type === 'text')) {
    throw bad('response_format', 'Structured output is not supported: response_format may only be {"type":"text"}.');
  }
  const tc = body.tool_choice;
  if (tc !== undefined && tc !== null && tc !== 'auto' && tc !== 'none') throw bad('tool_choice', 'tool_choice may only be "auto" or "none".');
}

function stopField(body: Json): string | string[] | undefined {
  const v = body.stop;
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length <= 4 && v.every((s) => typeof s === 'string')) return v as string[];
  throw bad('stop', 'stop must be a string or an array of up to 4 strings.');
}

function toolsField(body: Json, maxTools: number): ToolDefinition[] | undefined {
  const v = body.tools;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw bad('tools', 'tools must be an array.');
  if (v.length > maxTools) throw bad('tools', `tools may hold at most ${maxTools} tools (this request has ${v.length}).`);
  return v.map((t, i) => {
    const p = `tools[${i}]`;
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) throw bad(p, `${p} must be {"type":"function","function":{…}}.`);
    const f = t.function;
    if (typeof f.name !== 'string' || !toolName.test(f.name)) throw bad(`${p}.function.name`, 'A tool name is 1 to 64 letters, digits, underscores or dashes.');
    if (f.description !== undefined && typeof f.description !== 'string') throw bad(`${p}.function.description`, 'description must be a string.');
    if (f.parameters !== undefined && !isObject(f.parameters)) throw bad(`${p}.function.parameters`, 'parameters must be a JSON Schema object.');
    if (f.parameters !== undefined && nestedDeeperThan(f.parameters, maxSchemaDepth)) {
      throw bad(`${p}.function.parameters`, `parameters may nest at most ${maxSchemaDepth} levels deep.`);
    }
    const fn: ToolDefinition['function'] = { name: f.name };
    if (f.description !== undefined) fn.description = f.description as string;
    if (f.parameters !== undefined) fn.parameters = f.parameters as Record<string, unknown>;
    if (typeof f.strict === 'boolean') fn.strict = f.strict;
    return { type: 'function', function: fn };
  });
}

function toolCalls(v: unknown, p: string): ChatMessage['tool_calls'] {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw bad(p, `${p} must be an array.`);
  return v.map((c, i) => {
    const q = `${p}[${i}]`;
    if (!isObject(c) || typeof c.id !== 'string' || !isObject(c.function) || typeof c.function.name !== 'string' || typeof c.function.arguments !== 'string') {
      throw bad(q, `${q} must have id and function {name, arguments}.`);
    }
    return { id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } };
  });
}

function message(m: unknown, i: number, needs: RequestNeeds, limits: AttachmentLimits): ChatMessage {
  // The message's path is made only for an error (a string per message, on every request, before).
  if (!isObject(m)) throw bad(`messages[${i}]`, `messages[${i}] must be an object.`);
  if (typeof m.role !== 'string' || !roles.has(m.role)) throw bad(`messages[${i}].role`, `messages[${i}].role must be one of system, developer, user, assistant, tool.`);
  const role = m.role as ChatMessage['role'];
  let content: ChatMessage['content'];
  if (typeof m.content === 'string') content = m.content;
  else if (Array.isArray(m.content)) content = normalizeParts(m.content, `messages[${i}].content`, needs, limits) as ContentPart[];
  else if ((m.content === null || m.content === undefined) && role === 'assistant') content = null;
  else throw bad(`messages[${i}].content`, `messages[${i}].content must be a string or an array of content parts.`);
  const out: ChatMessage = { role, content };
  if (typeof m.name === 'string') out.name = m.name;
  if (role !== 'assistant' && role !== 'tool') return out;
  const p = `messages[${i}]`;
  if (role === 'assistant') {
    const calls = toolCalls(m.tool_calls, `${p}.tool_calls`);
    if (calls) out.tool_calls = calls;
    if (content === null && !calls) throw bad(`${p}.content`, 'An assistant message needs content or tool_calls.');
  }
  if (role === 'tool') {
    if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') throw bad(`${p}.tool_call_id`, 'A tool message needs tool_call_id.');
    out.tool_call_id = m.tool_call_id;
  }
  return out;
}

/**
 * Checks a parsed body against the fields the spec accepts and returns only those: unknown fields
 * are dropped here, so they are never forwarded. Every refusal names its `param`.
 */
export function validateChatRequest(body: unknown, limits: ValidationLimits): { chat: ChatRequest; needs: RequestNeeds } {
  if (!isObject(body)) throw bad('body', 'The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model.trim() === '') throw bad('model', 'model is required: "auto", "route/<name>" or "<provider>:<model>".');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw bad('messages', 'messages must be a non-empty array.');
  if (body.messages.length > limits.maxMessages) throw bad('messages', `messages may hold at most ${limits.maxMessages} messages (this request has ${body.messages.length}).`);
  refuseUnsupported(body);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw bad('stream', 'stream must be a boolean.');
  const so = body.stream_options;
  if (so !== undefined && so !== null && (!isObject(so) || (so.include_usage !== undefined && typeof so.include_usage !== 'boolean'))) {
    throw bad('stream_options', 'stream_options must be {"include_usage": boolean}.');
  }
  const needs: RequestNeeds = { images: 0, pdfs: 0, tools: false, attachmentBytes: 0 };
  const messages = body.messages.map((m, i) => message(m, i, needs, limits));
  const maxTokens = optionalInteger(body, 'max_completion_tokens') ?? optionalInteger(body, 'max_tokens');
  const chat: ChatRequest = { model: body.model, messages, stream: body.stream === true, includeUsage: body.stream === true && isObject(so) && so.include_usage === true };
  if (maxTokens !== undefined) {
    chat.maxTokens = maxTokens;
    chat.maxTokensField = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  }
  const temperature = optionalNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) chat.temperature = temperature;
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) chat.top_p = topP;
  const stop = stopField(body);
  if (stop !== undefined) chat.stop = stop;
  const tools = toolsField(body, limits.maxTools);
  if (tools && tools.length > 0) {
    chat.tools = tools;
    needs.tools = true;
  }
  if (body.tool_choice === 'auto' || body.tool_choice === 'none') chat.tool_choice = body.tool_choice;
  return { chat, needs };
}
