import { DatabaseSync } from 'node:sqlite';
import { workerData } from 'node:worker_threads';

/**
 * Copies the WAL into the database file (a checkpoint, with an fsync) off the event loop: a
 * passive checkpoint every `intervalMs`, never waiting on readers or writers. After `quietMs`
 * with no new frames it truncates the WAL (waiting up to 5 s for readers) and ends, so an idle
 * service keeps no thread; the writer starts it again once the WAL has grown (sqlite-checkpointer.ts).
 *
 * Under steady writes a passive checkpoint never catches up with the writer, and SQLite starts
 * the WAL over from its beginning only when one has: the file grew some 15 MB a second at 64
 * connections (every new block zeroed by the file system, 3.5 % of the process's CPU). So once
 * the WAL holds `restartFrames`, a restart checkpoint copies the few frames the passive one left
 * and waits for readers to leave the WAL; the writer's next transaction then writes from the
 * start of the file, over blocks it already has. Meanwhile writers are refused: the event loop's
 * writer waits on timers (sqlite-writer.ts), and only writes behind replies wait.
 */
const { file, intervalMs, quietMs, restartFrames } = workerData as { file: string; intervalMs: number; quietMs: number; restartFrames: number };
const db = new DatabaseSync(file);
db.exec('pragma busy_timeout = 5000; pragma wal_autocheckpoint = 0');

let lastFrames = -1;
let quietSince = Date.now();
const timer = setInterval(() => {
  let frames = lastFrames;
  try {
    const r = db.prepare('pragma wal_checkpoint(passive)').get() as { log: number } | undefined;
    frames = Number(r?.log ?? 0);
    if (frames >= restartFrames) db.exec('pragma wal_checkpoint(restart)');
  } catch {
    // busy: the next round takes it
  }
  const now = Date.now();
  if (frames !== lastFrames) {
    lastFrames = frames;
    quietSince = now;
    return;
  }
  if (now - quietSince < quietMs) return;
  clearInterval(timer);
  try {
    db.exec('pragma wal_checkpoint(truncate)');
  } catch {
    // readers held on past the busy timeout: the next start tries again
  }
  db.close();
}, intervalMs);
