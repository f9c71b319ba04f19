/**
 * A registry that every request joins and leaves (the requests running on this replica, the
 * settles under way): entries in an array of slots, an emptied slot reused by the next entry.
 *
 * Why not a Map or a Set: when V8 rebuilds a Map's or Set's hash table (it does so every few dozen
 * additions once entries are also deleted), the table it replaces keeps its entries and a pointer
 * to its successor, for iterators still walking it. Once one replaced table sits in the old
 * generation, a scavenge treats it as alive, so its successor survives, then that one's successor,
 * and every request any of them lists: under concurrency the whole stream of requests was copied
 * into the old generation and died only at the next full collection (18 % of what svc allocated
 * survived each scavenge at 64 connections; bench/README.md "Sixth look"). An array slot that is
 * emptied forgets its entry, and a grown array's old store points at nothing newer.
 *
 * @example
 * const slot = roster.add(rctx);   // join
 * roster.remove(slot, rctx);       // leave
 * for (const r of roster.values()) ...
 */
export class Roster<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `item`; returns its slot, which `remove` needs. */
  add(item: T): number {
    this.count++;
    const slot = this.free.pop();
    if (slot === undefined) return this.slots.push(item) - 1;
    this.slots[slot] = item;
    return slot;
  }

  /** What `slot` holds now. */
  at(slot: number): T | undefined {
    return this.slots[slot];
  }

  /** Removes `item` from `slot`; does nothing when the slot holds something else (already removed). */
  remove(slot: number, item: T): void {
    if (this.slots[slot] !== item || item === undefined) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  /** Forgets every entry (a later `remove` of one of them does nothing). */
  clear(): void {
    this.slots.length = 0;
    this.free.length = 0;
    this.count = 0;
  }

  /** The entries now, in slot order (a copy: entries may leave while the caller walks them). */
  values(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.slots.length; i++) {
      const v = this.slots[i];
      if (v !== undefined) out.push(v);
    }
    return out;
  }
}
