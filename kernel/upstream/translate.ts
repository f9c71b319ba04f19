import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ContentPart, ToolCall, Usage } from '../contracts/chat.js';

/**
 * Small pure pieces every native translation needs (Anthropic, Gemini): attachments out of
 * `data:` URLs, the system prompt pulled out of the messages, tool arguments as objects, and
 * Chat Completions replies and chunks built so they validate against the wire schema.
 */

/** A `data:<type>;base64,<data>` URL taken apart; undefined for anything else (links). */
export function dataUrl(url: string | undefined): { mimeType: string; data: string } | undefined {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url ?? '');
  return m ? { mimeType: m[1]!.toLowerCase(), data: m[2]! } : undefined;
}

/** A non-PDF file part (a text file) as the text every model is given: delimited and named by its filename. */
export function fileAsText(file: ContentPart & { type: 'file' }): string {
  const name = file.file.filename ?? 'file';
  const text = Buffer.from(dataUrl(file.file.file_data)?.data ?? '', 'base64').toString('utf8');
  return `--- file: ${name} ---\n${text}\n--- end of file: ${name} ---`;
}

/** A message's content as plain text (text parts joined; attachments have no text). */
export function plainText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : p.type === 'file' && !dataUrl(p.file.file_data)?.mimeType.includes('pdf') ? fileAsText(p) : '')).join('');
}

/**
 * System and developer messages (anywhere in the list) as one instruction text, and the rest.
 * Native APIs take the instructions apart from the turns; developer means system to them.
 */
export function splitInstructions(messages: ChatMessage[]): { instructions: string | undefined; turns: ChatMessage[] } {
  const texts = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => plainText(m.content));
  return { instructions: texts.length > 0 ? texts.join('\n\n') : undefined, turns: messages.filter((m) => m.role !== 'system' && m.role !== 'developer') };
}

/** A tool call's `arguments` JSON as the object native APIs want (an unreadable or non-object one as `{}`). */
export function argumentsObject(args: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export type FinishReason = ChatCompletion['choices'][number]['finish_reason'];

/** Identity of one reply, shared by its chunks. */
export interface ReplyHead {
  id: string;
  model: string;
  created: number;
}

/** Usage with the total filled in and details only when the vendor reported them. */
export function usageOf(prompt: number, completion: number, cached?: number, reasoning?: number): Usage {
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached !== undefined) usage.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}

/** A whole reply with one choice; `refusal` and `logprobs` filled as the schema requires. */
export function oneChoiceCompletion(head: ReplyHead, content: string | null, calls: ToolCall[], finish: FinishReason, usage: Usage | undefined): ChatCompletion {
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  const out: ChatCompletion = { id: head.id, object: 'chat.completion', created: head.created, model: head.model, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }] };
  if (usage) out.usage = usage;
  return out;
}

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** One chunk of choice 0. */
export function oneChoiceChunk(head: ReplyHead, delta: Delta, finish: FinishReason = null): ChatCompletionChunk {
  return { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
}

/**
 * A tool call's next piece of arguments. The wire schema lets a streamed call's `function` carry
 * `arguments` alone after its first chunk (the kernel's ToolCall type wants both fields).
 */
export function argumentsDelta(index: number, args: string): NonNullable<Delta['tool_calls']>[number] {
  return { index, function: { arguments: args } as ToolCall['function'] };
}

/** The final usage chunk (no choices), as OpenAI sends it with `include_usage`. */
export function usageChunk(head: ReplyHead, usage: Usage): ChatCompletionChunk {
  return { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, choices: [], usage };
}

/** A non-negative integer from a vendor count (absent or odd values count as 0). */
export const vendorCount = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

/**
 * Builds one stream's chunks: the first one carries `role: 'assistant'`, as OpenAI sends it, and
 * all share the reply's head (updated as the vendor reveals its id and model).
 *
 * @example
 * const out = new ChunkWriter(); out.head = { id, model, created }; out.delta({ content: 'Hi' });
 */
export class ChunkWriter {
  head: ReplyHead = { id: '', model: '', created: Math.floor(Date.now() / 1000) };
  private roleSent = false;

  delta(d: Delta, finish: FinishReason = null): ChatCompletionChunk {
    if (this.roleSent) return oneChoiceChunk(this.head, d, finish);
    this.roleSent = true;
    return oneChoiceChunk(this.head, { role: 'assistant', ...d }, finish);
  }

  usage(usage: Usage): ChatCompletionChunk {
    return usageChunk(this.head, usage);
  }
}
