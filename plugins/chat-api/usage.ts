import type { ChatMessage, Usage } from '../../kernel/index.js';

/**
 * A rough token count (about four characters a token) used only when the provider reported no
 * usage: a reply that broke off is charged for what was produced (SPEC.md Cost rules).
 */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function estimatePromptTokens(messages: ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += 16;
    if (typeof m.content === 'string') chars += m.content.length;
    else if (Array.isArray(m.content)) for (const p of m.content) chars += p.type === 'text' ? p.text.length : 3000;
    for (const c of m.tool_calls ?? []) chars += c.function.name.length + c.function.arguments.length;
  }
  return Math.ceil(chars / 4);
}

/**
 * Usage for a reply that ended without the provider's figures. The estimate never exceeds the
 * request's output limit: the provider cannot have produced more, and the hold covers exactly that.
 */
export function producedUsage(messages: ChatMessage[], producedChars: number, maxTokens?: number): Usage {
  const prompt = estimatePromptTokens(messages);
  const completion = Math.min(estimateTokens(producedChars), maxTokens ?? Infinity);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
