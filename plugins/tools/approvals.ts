import { GatewayError, randomId, type ChatMessage, type Principal, type Store, type ToolCall } from '../../kernel/index.js';

/** Where a loop stopped for an approval, to continue from in a later request. */
export interface PausedLoop {
  /** What the loop added after the client's messages: the assistant's tool calls and the results so far. */
  steps: ChatMessage[];
  /** The waiting call, as the model made it. */
  call: ToolCall;
  /** Calls after it in the same turn, still to run. */
  rest: ToolCall[];
  /** Function names of the turn mapped back to server and tool. */
  names: Record<string, { serverId: string; tool: string }>;
}

export interface Approval {
  id: string;
  serverId: string;
  tool: string;
  paused: PausedLoop;
}

interface Row { id: string; workspace_id: string; conversation_id: string; person_id: string; key_id: string | null; server_id: string; tool: string; state: string; loop: string }

/**
 * Approvals of waiting tool calls (SPEC.md Pending tool approval). Only whoever made the call
 * (the same person through the same key, or the same person's session) may answer it; anything
 * else, an unknown id, or another conversation is 404 not_found. An answered approval is 404
 * not_found too, with a message saying it was already answered (README "Approvals").
 */
export class Approvals {
  constructor(private readonly store: Store) {}

  async create(p: Principal, conversationId: string, serverId: string, tool: string, paused: PausedLoop): Promise<string> {
    const id = `apr_${randomId(12, 'base64url')}`;
    await this.store.execute(
      'insert into tool_approvals (id, workspace_id, conversation_id, person_id, key_id, server_id, tool, state, loop, created_at) values (?,?,?,?,?,?,?,?,?,?)',
      [id, p.workspaceId, conversationId, p.personId, p.keyId, serverId, tool, 'waiting', JSON.stringify(paused), Date.now()],
    );
    return id;
  }

  /** Answers a waiting approval once, across replicas (the conditional update decides). */
  async answer(p: Principal, conversationId: string, id: string, approve: boolean, param: string): Promise<Approval> {
    const rows = id.length <= 40 ? await this.store.execute<Row>('select * from tool_approvals where id = ?', [id]) : [];
    const row = rows[0];
    const mine = row && row.workspace_id === p.workspaceId && row.conversation_id === conversationId && row.person_id === p.personId && row.key_id === p.keyId;
    if (!row || !mine) throw new GatewayError('not_found', 'No such approval in this conversation, or not yours.', { param });
    const done = await this.store.execute<{ id: string }>("update tool_approvals set state = ?, answered_at = ? where id = ? and state = 'waiting' returning id", [
      approve ? 'approved' : 'denied', Date.now(), id,
    ]);
    if (done.length === 0) throw new GatewayError('not_found', 'This approval was already answered.', { param });
    return { id, serverId: row.server_id, tool: row.tool, paused: JSON.parse(row.loop) as PausedLoop };
  }

  /**
   * Puts an answered approval back to waiting: its answer was refused before it took effect (the
   * request was rate limited, over budget or stopped before the loop ran), so it can be answered again.
   */
  async reopen(id: string): Promise<void> {
    await this.store.execute("update tool_approvals set state = 'waiting', answered_at = null where id = ? and state in ('approved', 'denied')", [id]);
  }

  async grant(p: Principal, serverId: string, tool: string): Promise<void> {
    await this.store.execute(
      'insert into tool_grants (workspace_id, person_id, server_id, tool, created_at) values (?, ?, ?, ?, ?) on conflict do nothing',
      [p.workspaceId, p.personId, serverId, tool, Date.now()],
    );
  }

  async granted(p: Principal, serverId: string, tool: string): Promise<boolean> {
    const rows = await this.store.execute('select 1 as ok from tool_grants where workspace_id = ? and person_id = ? and server_id = ? and tool = ?', [p.workspaceId, p.personId, serverId, tool]);
    return rows.length > 0;
  }
}
