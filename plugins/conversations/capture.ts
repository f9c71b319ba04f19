import type { ServerResponse } from 'node:http';
import type { ChatMessage, ToolCall } from '../../kernel/index.js';

/** Replies larger than this are not kept in history (a bound on memory per request). */
const maxCaptured = 8 * 1024 * 1024;

type Write = (...a: unknown[]) => unknown;
const tapOf = Symbol('svc.replyTap');
type Tapped = ServerResponse & { [tapOf]: ReplyTap };

/**
 * Keeps a copy of what the reply writes, so the conversation's history gets the reply as the
 * client saw it, whole or streamed, whichever model and retry produced it. Only requests that
 * name a conversation are tapped. The response's write and end are replaced by two functions
 * shared by every tapped response (they find the tap on the response) rather than closures and
 * bound copies made per request, which kept the request's whole scope reachable from the
 * response.
 */
export class ReplyTap {
  private readonly parts: Buffer[] = [];
  private size = 0;
  readonly write: Write;
  readonly end: Write;

  constructor(res: ServerResponse) {
    this.write = res.write as unknown as Write;
    this.end = res.end as unknown as Write;
    (res as Tapped)[tapOf] = this;
    res.write = tappedWrite as ServerResponse['write'];
    res.end = tappedEnd as ServerResponse['end'];
  }

  keep(chunk: unknown, encoding?: unknown): void {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || this.size > maxCaptured) return;
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    this.size += b.length;
    this.parts.push(b);
  }

  /** What the reply wrote, or null when it was larger than kept. */
  text(): string | null {
    return this.size > maxCaptured ? null : Buffer.concat(this.parts).toString('utf8');
  }
}

function tappedWrite(this: Tapped, ...a: unknown[]): unknown {
  const tap = this[tapOf];
  tap.keep(a[0], a[1]);
  return tap.write.apply(this, a);
}

function tappedEnd(this: Tapped, ...a: unknown[]): unknown {
  const tap = this[tapOf];
  tap.keep(a[0], a[1]);
  return tap.end.apply(this, a);
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
