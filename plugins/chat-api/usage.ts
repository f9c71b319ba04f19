import type { ChatCompletionChunk, ChatRequest, TokenCounter, Usage } from '../../kernel/index.js';

/**
 * The tokenizer dispatch counts with: the budgets plugin's (`TokenCounterToken`), or, when that
 * plugin is off (nothing is charged then), one token per four characters.
 */
export function counterOr(counter: TokenCounter | undefined): TokenCounter {
  if (counter) return counter;
  const text = (t: string): number => Math.ceil(t.length / 4);
  const input: TokenCounter['input'] = (chat) => text(JSON.stringify(chat.messages)) + (chat.tools ? text(JSON.stringify(chat.tools)) : 0);
  // Certain only that no token covers more than 128 characters (cl100k's longest).
  const lower = (chat: Pick<ChatRequest, 'messages'>): number => {
    let chars = 0;
    for (const m of chat.messages) {
      if (typeof m.content === 'string') chars += m.content.length;
      else for (const p of m.content ?? []) if (p.type === 'text') chars += p.text.length;
    }
    return Math.ceil(chars / 128);
  };
  return {
    text,
    input,
    measure: (chat) => {
      const n = input(chat);
      return { lower: lower(chat), tokens: n, bound: n };
    },
  };
}

/** The text a chunk adds (content, refusal, tool call names and arguments), for counting output. */
export function producedText(chunk: ChatCompletionChunk): string {
  let s = '';
  for (const c of chunk.choices) {
    s += (c.delta.content ?? '') + (c.delta.refusal ?? '');
    for (const t of c.delta.tool_calls ?? []) s += (t.function?.name ?? '') + (t.function?.arguments ?? '');
  }
  return s;
}

/**
 * Usage for a reply that ended without the provider's figures (SPEC.md Cost rules: a reply that
 * broke off is charged for what was produced): the tokenizer's count of the input and of the
 * output produced, the output never above what was sent as the limit (the provider cannot have
 * produced more, and the hold covers exactly that).
 */
export function producedUsage(counter: TokenCounter, chat: Pick<ChatRequest, 'messages' | 'tools'>, produced: string, maxTokens: number): Usage {
  const prompt = counter.input(chat);
  const completion = Math.min(counter.text(produced), maxTokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * Usage for a stream that broke off, from what the provider had reported by then (the
 * stream_interrupted error's `usage`, providers/README.md "Stream rules"): its prompt count
 * whenever it gave one; its output count when that covered all that was streamed (Gemini and
 * OpenAI-like running usage), else (`promptOnly`: Anthropic reports output only at the end) the
 * tokenizer's count of what was produced; the tokenizer for everything when it reported nothing.
 * Output is never charged above the call's limit.
 */
export function brokenOffUsage(counter: TokenCounter, chat: Pick<ChatRequest, 'messages' | 'tools'>, produced: string, maxTokens: number, failure: unknown): Usage {
  const { usage: reported, promptOnly } = (failure ?? {}) as { usage?: Usage; promptOnly?: boolean };
  if (!reported) return producedUsage(counter, chat, produced, maxTokens);
  const prompt = reported.prompt_tokens;
  const completion = promptOnly ? Math.min(counter.text(produced), maxTokens) : Math.min(reported.completion_tokens, maxTokens);
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (reported.prompt_tokens_details) usage.prompt_tokens_details = reported.prompt_tokens_details;
  if (!promptOnly && reported.completion_tokens_details) usage.completion_tokens_details = reported.completion_tokens_details;
  return usage;
}
