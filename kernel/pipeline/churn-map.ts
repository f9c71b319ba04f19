/** A slot whose entry was deleted (probing goes on past it; a new entry may reuse it). */
const REMOVED = Symbol('removed');

/** Code units of a long key that its hash reads at each end. */
const HASHED_END = 32;

/**
 * FNV-1a over the key's UTF-16 code units: all of a short key; of a longer one (a hold record is
 * some 300 characters) its length and the first and last HASHED_END, where its id and time are.
 * Keys alike in both ends only share a probe chain; equality is still decided on the whole key.
 */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  const n = key.length;
  if (n <= 2 * HASHED_END) {
    for (let i = 0; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    return h >>> 0;
  }
  h = Math.imul(h ^ n, 0x01000193);
  for (let i = 0; i < HASHED_END; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  for (let i = n - HASHED_END; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A string-keyed map for entries that come and go with requests (the holds in flight, the cache's
 * hold records): the subset of `Map` they use, as open addressing over two arrays.
 *
 * Why not a Map: V8 rebuilds a Map's hash table every few dozen additions once entries are also
 * deleted, and the table it replaces keeps its entries and a pointer to its successor; one replaced
 * table in the old generation keeps every later one and all they listed alive through scavenges
 * (roster.ts, bench/README.md "Sixth look"). Why not an object's properties (this class until
 * 2026-11-27): each new key was internalized as a property name (~1.2 µs for a hold record), and
 * internalized strings outlive every scavenge until the next full collection; a grown object
 * dictionary left in the old generation still points at the values it held. Here a deleted or
 * moved slot is cleared at once, and a rebuilt table's old arrays are emptied, so nothing old points
 * at an entry that left (bench/README.md "Ninth look").
 *
 * @example
 * const live = new ChurnMap<Live>(); live.set(id, l); live.get(id); live.delete(id);
 */
export class ChurnMap<V> {
  private keyAt: Array<string | typeof REMOVED | undefined> = new Array<undefined>(16).fill(undefined);
  private valueAt: Array<V | undefined> = new Array<undefined>(16).fill(undefined);
  private count = 0;
  /** Slots holding REMOVED: they lengthen probes until the next rebuild. */
  private removed = 0;

  get size(): number {
    return this.count;
  }

  /** The slot holding `key`, or -1. */
  private find(key: string): number {
    const mask = this.keyAt.length - 1;
    for (let i = hashOf(key) & mask; ; i = (i + 1) & mask) {
      const k = this.keyAt[i];
      if (k === undefined) return -1;
      if (k === key) return i;
    }
  }

  get(key: string): V | undefined {
    const i = this.find(key);
    return i < 0 ? undefined : this.valueAt[i];
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  set(key: string, value: V): this {
    const found = this.find(key);
    if (found >= 0) {
      this.valueAt[found] = value;
      return this;
    }
    // Kept at most half full, counting removed slots, so every probe ends at an empty slot soon.
    if ((this.count + this.removed + 1) * 2 > this.keyAt.length) this.rebuild();
    const mask = this.keyAt.length - 1;
    let i = hashOf(key) & mask;
    while (this.keyAt[i] !== undefined && this.keyAt[i] !== REMOVED) i = (i + 1) & mask;
    if (this.keyAt[i] === REMOVED) this.removed--;
    this.keyAt[i] = key;
    this.valueAt[i] = value;
    this.count++;
    return this;
  }

  delete(key: string): boolean {
    const i = this.find(key);
    if (i < 0) return false;
    this.keyAt[i] = REMOVED;
    this.valueAt[i] = undefined;
    this.count--;
    this.removed++;
    return true;
  }

  clear(): void {
    this.keyAt.fill(undefined);
    this.valueAt.fill(undefined);
    this.count = 0;
    this.removed = 0;
  }

  keys(): string[] {
    return this.pairs().map(([k]) => k);
  }

  values(): V[] {
    return this.pairs().map(([, v]) => v);
  }

  /** [key, value] pairs now (a copy: entries may leave while the caller walks them). */
  pairs(): Array<[string, V]> {
    const out: Array<[string, V]> = [];
    for (let i = 0; i < this.keyAt.length; i++) {
      const k = this.keyAt[i];
      if (k !== undefined && k !== REMOVED) out.push([k, this.valueAt[i]!]);
    }
    return out;
  }

  /** Re-inserts the live entries into arrays sized for them (at least 16 slots, under a quarter full). */
  private rebuild(): void {
    const keys = this.keyAt;
    const values = this.valueAt;
    let size = 16;
    while (size < (this.count + 1) * 4) size *= 2;
    this.keyAt = new Array<undefined>(size).fill(undefined);
    this.valueAt = new Array<undefined>(size).fill(undefined);
    this.count = 0;
    this.removed = 0;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== undefined && k !== REMOVED) this.set(k, values[i]!);
    }
    // The old arrays may sit in the old generation: emptied, they point at nothing young.
    keys.fill(undefined);
    values.fill(undefined);
  }
}
