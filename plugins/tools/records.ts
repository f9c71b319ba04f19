import { createHash } from 'node:crypto';
import { orderedId, type Store } from '../../kernel/index.js';

/**
 * What happened to a call in the request of its record: ok, error: it ran; denied: origin not
 * allowed; pending: it stopped for an approval; refused: this request answered that approval with
 * `x-svc-deny`. A record is never rewritten to another outcome: a pending one gets the answer
 * beside it (`answer`, `answerRequestId`), and the answering request has its own record (the
 * approved call's ok or error, or refused).
 */
export type CallOutcome = 'ok' | 'error' | 'denied' | 'pending' | 'refused';

export interface CallRecord {
  requestId: string;
  workspaceId: string;
  personId: string;
  serverId: string;
  tool: string;
  /** The raw arguments text: only its size and SHA-256 are stored. */
  argumentsText: string;
  outcome: CallOutcome;
  durationMs: number;
  approvalId?: string | null;
}

interface Row {
  id: string; request_id: string; server_id: string; tool: string; arguments_bytes: number; arguments_sha256: string;
  outcome: string; duration_ms: number; approval_id: string | null; created_at: number | string;
  answer: 'approved' | 'refused' | null; answer_request_id: string | null;
}

/** Tool call records (issue 13 item 5), linked to the request's trace by its request id. */
export class CallRecords {
  constructor(private readonly store: Store) {}

  async add(r: CallRecord): Promise<string> {
    const id = orderedId('tc_');
    const args = Buffer.from(r.argumentsText, 'utf8');
    await this.store.execute(
      'insert into tool_calls (id, request_id, workspace_id, person_id, server_id, tool, arguments_bytes, arguments_sha256, outcome, duration_ms, approval_id, created_at) values (?,?,?,?,?,?,?,?,?,?,?,?)',
      [id, r.requestId, r.workspaceId, r.personId, r.serverId, r.tool, args.length, createHash('sha256').update(args).digest('hex'), r.outcome, Math.round(r.durationMs), r.approvalId ?? null, Date.now()],
    );
    return id;
  }

  /** The pending record of an approval gets its answer and the request that gave it; it stays pending (what happened in its own request). */
  async answer(approvalId: string, answer: 'approved' | 'refused', requestId: string): Promise<void> {
    await this.store.execute("update tool_calls set answer = ?, answer_request_id = ? where approval_id = ? and outcome = 'pending' and answer is null", [answer, requestId, approvalId]);
  }

  /** The answer was undone (Approvals.reopen): the call waits again. */
  async reopen(approvalId: string): Promise<void> {
    await this.store.execute("update tool_calls set answer = null, answer_request_id = null where approval_id = ? and outcome = 'pending'", [approvalId]);
  }

  /**
   * Records of a workspace, newest first; with `requestId`, that request's calls in the order they
   * ran. Keyset paging on (created_at, id): `cursor` is the previous page's `next_cursor`.
   */
  async list(workspaceId: string, q: { requestId?: string; cursor?: string; limit: number }) {
    const inOrder = Boolean(q.requestId);
    const where = ['workspace_id = ?'];
    const params: Array<string | number> = [workspaceId];
    if (q.requestId) {
      where.push('request_id = ?');
      params.push(q.requestId);
    }
    if (q.cursor) {
      const at = q.cursor.indexOf('_');
      const t = Number(q.cursor.slice(0, at));
      where.push(inOrder ? '(created_at > ? or (created_at = ? and id > ?))' : '(created_at < ? or (created_at = ? and id < ?))');
      params.push(t, t, q.cursor.slice(at + 1));
    }
    const order = inOrder ? 'created_at, id' : 'created_at desc, id desc';
    const rows = await this.store.execute<Row>(`select * from tool_calls where ${where.join(' and ')} order by ${order} limit ?`, [...params, q.limit + 1]);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      data: page.map((r) => ({
        id: r.id, request_id: r.request_id, server_id: r.server_id, tool: r.tool, arguments_bytes: Number(r.arguments_bytes), arguments_sha256: r.arguments_sha256,
        outcome: r.outcome, duration_ms: Number(r.duration_ms), approval_id: r.approval_id, answer: r.answer, answer_request_id: r.answer_request_id,
        created_at: new Date(Number(r.created_at)).toISOString(),
      })),
      next_cursor: rows.length > q.limit && last ? `${Number(last.created_at)}_${last.id}` : null,
    };
  }
}
