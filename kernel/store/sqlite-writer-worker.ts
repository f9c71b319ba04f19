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

export interface Statement { sql: string; params: SQLInputValue[]; returning?: boolean }
export type WriterMessage = { id: number; sql: string; params: SQLInputValue[] } | { id: number; tx: Statement[] };

/** Runs `tx` in one write transaction; each statement's rows (empty unless `returning`). */
function transaction(tx: Statement[]): unknown[][] {
  db.exec('begin immediate');
  try {
    const out = tx.map((s) => (s.returning ? statement(s.sql).all(...s.params) : (statement(s.sql).run(...s.params), [])));
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
