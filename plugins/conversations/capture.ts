import type { ServerResponse } from 'node:http';
import type { ChatMessage, ToolCall } from '../../kernel/index.js';

/** Replies larger than this are not kept in history (a bound on memory per request). */
const maxCaptured = 8 * 1024 * 1024;

/**
 * Keeps a copy of what the reply writes, so the conversation's history gets the reply as the
 * client saw it, whole or streamed, whichever model and retry produced it. Only requests that
 * name a conversation are tapped.
 */
export function tapResponse(res: ServerResponse): () => string | null {
  const parts: Buffer[] = [];
  let size = 0;
  const keep = (chunk: unknown, encoding?: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > maxCaptured) return;
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    size += b.length;
    parts.push(b);
  };
  const write = res.write.bind(res) as (...a: unknown[]) => boolean;
  const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
  res.write = ((...a: unknown[]) => {
    keep(a[0], a[1]);
    return write(...a);
  }) as ServerResponse['write'];
  res.end = ((...a: unknown[]) => {
    keep(a[0], a[1]);
    return end(...a);
  }) as ServerResponse['end'];
  return () => (size > maxCaptured ? null : Buffer.concat(parts).toString('utf8'));
}

type Delta = { content?: string | null; tool_calls?: Array<Partial<ToolCall> & { index: number; function?: { name?: string; arguments?: string } }> };

/** The assistant message of a whole reply (JSON) or a stream (server-sent chunks); null when there is none. */
export function replyMessage(text: string, streamed: boolean): ChatMessage | null {
  try {
    if (!streamed) {
      const body = JSON.parse(text) as { choices?: Array<{ message?: { content?: string | null; tool_calls?: ToolCall[] } }> };
      const m = body.choices?.[0]?.message;
      if (!m) return null;
      return { role: 'assistant', content: m.content ?? null, ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}) };
    }
    let content = '';
    const calls: ToolCall[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6)) as { error?: unknown; choices?: Array<{ delta?: Delta }> };
      if (chunk.error) return null; // a reply that broke off is not history
      for (const c of chunk.choices ?? []) {
        content += c.delta?.content ?? '';
        for (const t of c.delta?.tool_calls ?? []) {
          const call = (calls[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (t.id) call.id = t.id;
          call.function.name += t.function?.name ?? '';
          call.function.arguments += t.function?.arguments ?? '';
        }
      }
    }
    const toolCalls = calls.filter(Boolean);
    return { role: 'assistant', content: content || (toolCalls.length ? null : ''), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
  } catch {
    return null;
  }
}

/** What the request adds to the history: the messages after its last assistant message (clients resend the earlier ones). */
export function newMessages(messages: ChatMessage[]): ChatMessage[] {
  let i = messages.length - 1;
  while (i >= 0 && messages[i]!.role !== 'assistant') i--;
  return messages.slice(i + 1);
}
