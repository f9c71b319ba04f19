import { ChurnMap } from '../../kernel/index.js';
import type { TrackedHold } from './reservation.js';

/** A hold this process took and has not ended; kept alive in the cache until settled. */
export interface Live {
  hold: TrackedHold;
  member: string;
  /** When the cache's record of it expires unless touched again. */
  expiresAt: number;
  ended: boolean;
}

/** This process's holds in flight (the reaper keeps them alive; stop waits for none of them). */
export class LiveHolds {
  /** By hold id (a ChurnMap, not a Map: kernel/pipeline/churn-map.ts says why). */
  readonly all = new ChurnMap<Live>();

  add(hold: TrackedHold, member: string, expiresAt: number): Live {
    const l: Live = { hold, member, expiresAt, ended: false };
    this.all.set(hold.i, l);
    return l;
  }

  /** Marks it ended; false when it already was (settle and undo never both run). */
  end(l: Live): boolean {
    if (l.ended) return false;
    l.ended = true;
    this.all.delete(l.hold.i);
    return true;
  }
}
