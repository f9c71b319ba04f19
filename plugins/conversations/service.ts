import { BatchWriter, orderedId, type ChatMessage, type Conversation, type ConversationsService, type KeptDecision, type StoredMessage, type Store } from '../../kernel/index.js';

export interface ConversationRow {
  id: string; workspace_id: string; person_id: string; key_id: string | null; title: string | null; decision: string | null;
  created_at: number | string; updated_at: number | string;
}
interface MessageRow { message: string; request_id: string; model: string | null; created_at: number | string }

export const messageColumns = ['id', 'conversation_id', 'request_id', 'position', 'message', 'model', 'created_at'] as const;

export function fromRow(r: ConversationRow): Conversation {
  return {
    id: r.id, workspaceId: r.workspace_id, personId: r.person_id, keyId: r.key_id, title: r.title,
    decision: r.decision ? (JSON.parse(r.decision) as KeptDecision) : null,
    createdAt: new Date(Number(r.created_at)), updatedAt: new Date(Number(r.updated_at)),
  };
}

export const newConversationId = (): string => orderedId('conv_');

/**
 * Conversations in the database (shared by every replica); history is appended behind the
 * response in batches, like usage records.
 */
export class Conversations implements ConversationsService {
  private seq = 0;
  /** When this process last moved a conversation's `updated_at`. */
  private readonly touched = new Map<string, number>();
  constructor(
    private readonly store: Store,
    private readonly history$: BatchWriter,
  ) {}

  async get(workspaceId: string, personId: string, id: string): Promise<Conversation | undefined> {
    const rows = await this.store.execute<ConversationRow>('select * from conversations where id = ? and workspace_id = ? and person_id = ?', [id, workspaceId, personId]);
    return rows[0] && fromRow(rows[0]);
  }

  async create(c: { workspaceId: string; personId: string; keyId: string | null; title: string | null }): Promise<Conversation> {
    const now = Date.now();
    const row: ConversationRow = { id: newConversationId(), workspace_id: c.workspaceId, person_id: c.personId, key_id: c.keyId, title: c.title, decision: null, created_at: now, updated_at: now };
    await this.store.execute('insert into conversations (id, workspace_id, person_id, key_id, title, decision, created_at, updated_at) values (?,?,?,?,?,?,?,?)', [
      row.id, row.workspace_id, row.person_id, row.key_id, row.title, null, now, now,
    ]);
    return fromRow(row);
  }

  async list(workspaceId: string, personId: string, limit: number): Promise<Conversation[]> {
    const rows = await this.store.execute<ConversationRow>('select * from conversations where workspace_id = ? and person_id = ? order by created_at desc, id limit ?', [workspaceId, personId, limit]);
    return rows.map(fromRow);
  }

  /** Sets the title (null clears it); the conversation must already be the caller's (routes check). */
  async rename(id: string, title: string | null): Promise<Conversation> {
    await this.store.execute('update conversations set title = ?, updated_at = ? where id = ?', [title, Date.now(), id]);
    const rows = await this.store.execute<ConversationRow>('select * from conversations where id = ?', [id]);
    return fromRow(rows[0]!);
  }

  async remove(id: string): Promise<void> {
    await this.flush(); // history still buffered for it must not outlive it
    await this.store.transaction(async (exec) => {
      await exec('delete from conversation_messages where conversation_id = ?', [id]);
      await exec('delete from conversations where id = ?', [id]);
    });
  }

  async history(id: string): Promise<StoredMessage[]> {
    const rows = await this.store.execute<MessageRow>('select message, request_id, model, created_at from conversation_messages where conversation_id = ? order by created_at, request_id, position', [id]);
    return rows.map((r) => ({ message: JSON.parse(r.message) as ChatMessage, requestId: r.request_id, model: r.model, createdAt: new Date(Number(r.created_at)) }));
  }

  /**
   * `model` is recorded on the assistant messages (the replies). The conversation's last activity
   * moves too (retention counts from it), at most once a minute per conversation.
   */
  append(id: string, requestId: string, messages: ChatMessage[], model: string | null = null): void {
    const now = Date.now();
    if ((this.touched.get(id) ?? 0) < now - 60_000) {
      this.touched.set(id, now);
      if (this.touched.size > 10_000) this.touched.clear();
      void this.store.execute('update conversations set updated_at = ? where id = ? and updated_at < ?', [now, id, now]).catch(() => this.touched.delete(id));
    }
    // Positions only ever grow in this process, so one request's several appends keep their order.
    for (const m of messages) this.history$.add([orderedId('msg_'), id, requestId, this.seq++, JSON.stringify(m), m.role === 'assistant' ? model : null, now]);
  }

  async keepDecision(id: string, decision: KeptDecision): Promise<KeptDecision> {
    // First writer wins, on every replica: the conditional update is the arbiter, then read back.
    await this.store.execute('update conversations set decision = ?, updated_at = ? where id = ? and decision is null', [JSON.stringify(decision), Date.now(), id]);
    const rows = await this.store.execute<{ decision: string | null }>('select decision from conversations where id = ?', [id]);
    const kept = rows[0]?.decision;
    return kept ? (JSON.parse(kept) as KeptDecision) : decision;
  }

  flush(): Promise<void> {
    return this.history$.flush();
  }
}
