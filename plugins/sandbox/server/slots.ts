import { mkdirSync, rmSync, chmodSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../../../kernel/index.js';
import type { SandboxSettings } from './settings.js';

/** One place where calls run, one at a time, with its own scratch folder and egress socket. */
export interface Slot {
  index: number;
  dir: string;
  scratch: string;
  egressSocket: string;
  quarantined: boolean;
  busy: boolean;
  calls: number;
}

/**
 * The N slots. A slot whose call left something behind is quarantined and never used again;
 * when none is left the pool calls `onExhausted` (the process exits and the container runtime
 * starts a fresh one).
 */
export class SlotPool {
  readonly slots: Slot[] = [];
  private relays: Server[] = [];
  private waiters: Array<(slot: Slot | null) => void> = [];
  private closed = false;

  constructor(private readonly s: SandboxSettings, private readonly log: Logger, private readonly onExhausted: () => void) {}

  /** Creates the slot folders and each slot's relay from its unix socket to the egress proxy. */
  async open(): Promise<void> {
    rmSync(this.s.workDir, { recursive: true, force: true });
    for (let i = 0; i < this.s.slots; i++) {
      const dir = join(this.s.workDir, `slot-${i}`);
      mkdirSync(dir, { recursive: true });
      const slot: Slot = { index: i, dir, scratch: join(dir, 'scratch'), egressSocket: join(dir, 'egress.sock'), quarantined: false, busy: false, calls: 0 };
      const relay = createServer((inner) => {
        const outer = connect({ host: this.s.egressHost, port: this.s.egressPort });
        inner.on('error', () => outer.destroy());
        outer.on('error', () => inner.destroy());
        inner.pipe(outer).pipe(inner);
      });
      await new Promise<void>((resolve, reject) => relay.once('error', reject).listen(slot.egressSocket, resolve));
      // The sandboxed user is not this process's user: the socket must be connectable by anyone who can see it.
      chmodSync(slot.egressSocket, 0o666);
      this.relays.push(relay);
      this.slots.push(slot);
    }
  }

  /** A free slot, waiting up to `queueMs` for one (calls queue briefly while a slot is being wiped). */
  acquire(queueMs: number): Promise<Slot | null> {
    if (this.closed) return Promise.resolve(null);
    const slot = this.slots.find((x) => !x.busy && !x.quarantined);
    if (slot) {
      slot.busy = true;
      return Promise.resolve(slot);
    }
    return new Promise((resolve) => {
      const waiter = (s: Slot | null): void => {
        clearTimeout(timer);
        resolve(s);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(null);
      }, queueMs);
      this.waiters.push(waiter);
    });
  }

  release(slot: Slot, leftover: string | null): void {
    slot.busy = false;
    if (leftover === null) {
      const next = this.waiters.shift();
      if (next) {
        slot.busy = true;
        next(slot);
      }
      return;
    }
    slot.quarantined = true;
    this.log.error('sandbox.slot_quarantined', { slot: slot.index, reason: leftover });
    if (this.slots.every((x) => x.quarantined)) {
      this.log.fatal('sandbox.exhausted', { slots: this.slots.length });
      for (const w of this.waiters.splice(0)) w(null);
      this.onExhausted();
    }
  }

  get usable(): number {
    return this.slots.filter((x) => !x.quarantined).length;
  }

  get free(): number {
    return this.slots.filter((x) => !x.quarantined && !x.busy).length;
  }

  /** Takes no more calls (queued ones get no slot) and closes the egress relays. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(null);
    for (const r of this.relays) r.close();
  }
}
