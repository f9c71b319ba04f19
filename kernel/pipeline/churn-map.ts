/**
 * A string-keyed map for entries that come and go with requests (the holds in flight, the cache's
 * hold records): the subset of `Map` they use, over an object without a prototype.
 *
 * Why not a Map: V8 rebuilds a Map's hash table every few dozen additions once entries are also
 * deleted, and the table it replaces keeps its entries and a pointer to its successor; one replaced
 * table in the old generation keeps every later one and all they listed alive through scavenges
 * (roster.ts, bench/README.md "Sixth look"). An object's dictionary, rebuilt, points at nothing newer.
 *
 * @example
 * const live = new ChurnMap<Live>(); live.set(id, l); live.get(id); live.delete(id);
 */
export class ChurnMap<V> {
  private entries: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.entries[key];
  }

  has(key: string): boolean {
    return key in this.entries;
  }

  set(key: string, value: V): this {
    if (!(key in this.entries)) this.count++;
    this.entries[key] = value;
    return this;
  }

  delete(key: string): boolean {
    if (!(key in this.entries)) return false;
    delete this.entries[key];
    this.count--;
    return true;
  }

  clear(): void {
    this.entries = Object.create(null) as Record<string, V>;
    this.count = 0;
  }

  keys(): string[] {
    return Object.keys(this.entries);
  }

  values(): V[] {
    return Object.values(this.entries);
  }

  /** [key, value] pairs now (a copy: entries may leave while the caller walks them). */
  pairs(): Array<[string, V]> {
    return Object.entries(this.entries);
  }
}
