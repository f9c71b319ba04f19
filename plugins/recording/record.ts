import type { ChatMessage, ContentPart, RequestContext } from '../../kernel/index.js';

/** Attachment bytes are not kept: a recording shows the part's type and size instead. */
function part(p: ContentPart): ContentPart | { type: string; omitted: string } {
  if (p.type === 'image_url' && p.image_url.url.startsWith('data:')) return { type: 'image_url', omitted: `${p.image_url.url.slice(5, p.image_url.url.indexOf(';'))}, ${p.image_url.url.length} characters` };
  if (p.type === 'file' && p.file.file_data) return { type: 'file', omitted: `${p.file.filename ?? 'file'}, ${p.file.file_data.length} characters` };
  return p;
}

function message(m: ChatMessage): unknown {
  return { ...m, content: Array.isArray(m.content) ? m.content.map(part) : m.content };
}

/** The recordings row of a request: its messages (attachments summarised) and the reply's text. */
export function recordingRow(ctx: RequestContext): Array<string | number | null> | null {
  const { principal, chat } = ctx.state;
  if (!principal?.workspaceId || !chat) return null;
  return [ctx.id, principal.workspaceId, ctx.receivedAt.getTime(), JSON.stringify(chat.messages.map(message)), ctx.state.reply ?? null];
}

export const recordingColumns = ['request_id', 'workspace_id', 'created_at', 'messages', 'reply'] as const;
