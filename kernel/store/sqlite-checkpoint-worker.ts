import { DatabaseSync } from 'node:sqlite';
import { workerData } from 'node:worker_threads';

/**
 * Copies the WAL into the database file (a checkpoint, with an fsync) off the event loop: a
 * passive checkpoint every `intervalMs`, never waiting on readers or writers. After `quietMs`
 * with no new frames it truncates the WAL (waiting up to 5 s for readers) and ends, so an idle
 * service keeps no thread; the writer starts it again once the WAL has grown (sqlite-checkpointer.ts).
 */
const { file, intervalMs, quietMs } = workerData as { file: string; intervalMs: number; quietMs: number };
const db = new DatabaseSync(file);
db.exec('pragma busy_timeout = 5000; pragma wal_autocheckpoint = 0');

let lastFrames = -1;
let quietSince = Date.now();
const timer = setInterval(() => {
  let frames = lastFrames;
  try {
    const r = db.prepare('pragma wal_checkpoint(passive)').get() as { log: number } | undefined;
    frames = Number(r?.log ?? 0);
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
