import { parentPort, workerData } from 'node:worker_threads';
import { DatabaseSync, type StatementSync, type SQLInputValue } from 'node:sqlite';

/**
 * The writer connection of the embedded shape: a second SQLite connection on its own thread, so
 * batched inserts (usage records, spans, hold records) and the settle's group commit (usage
 * record, running totals, settled hold in one transaction) never block the event loop that serves
 * requests. WAL mode lets it write while the main connection reads; with synchronous = normal a
 * committed transaction is in the WAL file before COMMIT returns, so it survives a killed process.
 */
const db = new DatabaseSync((workerData as { file: string }).file);
db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma busy_timeout = 5000');
// This connection checkpoints for both (the main one has autocheckpoint off, orm.ts): after its own
// commits, as SQLite does by default, and every few seconds for writes made on the main connection.
setInterval(() => {
  try {
    db.exec('pragma wal_checkpoint(passive)');
  } catch {
    // busy: the next round takes it
  }
}, 5000).unref();

/** Prepared statements by SQL text, least recently used dropped first (the texts are a small fixed set). */
const statements = new Map<string, StatementSync>();
const MAX_STATEMENTS = 400;
function statement(sql: string): StatementSync {
  let stmt = statements.get(sql);
  if (stmt) statements.delete(sql);
  else stmt = db.prepare(sql);
  statements.set(sql, stmt);
  if (statements.size > MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
  return stmt;
}

/**
 * The rows a `returning` statement gave, as plain objects built here from arrays. node:sqlite's
 * own row objects have a null prototype, and V8 gives each such object a hidden class of its own
 * (one per row: some eight per request in the group commit's totals); objects filled in the same
 * key order share one.
 */
const columnNames = new WeakMap<StatementSync, string[]>();
function returned(stmt: StatementSync, params: SQLInputValue[]): Array<Record<string, unknown>> {
  let names = columnNames.get(stmt);
  if (!names) {
    stmt.setReturnArrays(true);
    columnNames.set(stmt, (names = stmt.columns().map((c) => c.name)));
  }
  const rows = stmt.all(...params) as unknown as unknown[][];
  const out: Array<Record<string, unknown>> = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row: Record<string, unknown> = {};
    for (let j = 0; j < names.length; j++) row[names[j]!] = rows[i]![j];
    out[i] = row;
  }
  return out;
}

export interface Statement { sql: string; params: SQLInputValue[]; returning?: boolean }
export type WriterMessage = { id: number; sql: string; params: SQLInputValue[] } | { id: number; tx: Statement[] };

/** Runs `tx` in one write transaction; each statement's rows (empty unless `returning`). */
function transaction(tx: Statement[]): unknown[][] {
  db.exec('begin immediate');
  try {
    const out = tx.map((s) => (s.returning ? returned(statement(s.sql), s.params) : (statement(s.sql).run(...s.params), [])));
    db.exec('commit');
    return out;
  } catch (err) {
    if (db.isTransaction) db.exec('rollback');
    throw err;
  }
}

parentPort!.on('message', (m: WriterMessage) => {
  try {
    if ('tx' in m) parentPort!.postMessage({ id: m.id, rows: transaction(m.tx) });
    else {
      statement(m.sql).run(...m.params);
      parentPort!.postMessage({ id: m.id });
    }
  } catch (err) {
    const e = err as { message: string; code?: string; errcode?: number };
    parentPort!.postMessage({ id: m.id, error: e.message, code: e.code, errcode: e.errcode });
  }
});
