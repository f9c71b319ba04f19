import { parentPort, workerData } from 'node:worker_threads';
import { DatabaseSync, type StatementSync, type SQLInputValue } from 'node:sqlite';

/**
 * The write-behind connection of the embedded shape: a second SQLite connection on its own
 * thread, so batched inserts (usage records, spans, hold records) never block the event loop that
 * serves requests. WAL mode lets it write while the main connection reads.
 */
const db = new DatabaseSync((workerData as { file: string }).file);
db.exec('pragma journal_mode = wal; pragma synchronous = normal; pragma busy_timeout = 5000');
const statements = new Map<string, StatementSync>();

parentPort!.on('message', (m: { id: number; sql: string; params: SQLInputValue[] }) => {
  try {
    let stmt = statements.get(m.sql);
    if (!stmt) {
      stmt = db.prepare(m.sql);
      if (statements.size < 200) statements.set(m.sql, stmt);
    }
    stmt.run(...m.params);
    parentPort!.postMessage({ id: m.id });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message, code: (err as { code?: string }).code });
  }
});
