/**
 * The student's feature vocabulary, kept as the file's own bytes: a feature's row is found by
 * hashing its UTF-8 and comparing bytes in place. A Map of 49,152 strings held 6.8 MB of heap
 * (strings, the lines they were sliced from, entries) for the life of the process; this holds
 * the file and three typed arrays (1.4 MB, off the heap), and a lookup allocates nothing.
 */
export class Vocabulary {
  /** Row i's feature is bytes[starts[i], ends[i]). */
  private readonly starts: Uint32Array;
  private readonly ends: Uint32Array;
  /** Open addressing: row + 1, 0 for an empty slot; twice as many slots as rows, a power of two. */
  private readonly slots: Uint32Array;
  private readonly mask: number;
  private scratch = Buffer.allocUnsafe(256);

  /**
   * `file`: lines of `feature TAB weight`. Returns the vocabulary and the weights by row.
   * A feature listed twice maps to its last row, as a Map built line by line would.
   */
  static parse(file: Buffer): { vocabulary: Vocabulary; weights: Float32Array } {
    const starts: number[] = [];
    const ends: number[] = [];
    const weights: number[] = [];
    for (let at = 0; at < file.length; ) {
      let nl = file.indexOf(10, at);
      if (nl < 0) nl = file.length;
      if (nl > at) {
        const tab = file.lastIndexOf(9, nl - 1);
        if (tab < at) throw new Error(`vocabulary line ${starts.length + 1} has no weight`);
        starts.push(at);
        ends.push(tab);
        weights.push(Number(file.toString('latin1', tab + 1, nl)));
      }
      at = nl + 1;
    }
    return { vocabulary: new Vocabulary(file, Uint32Array.from(starts), Uint32Array.from(ends)), weights: Float32Array.from(weights) };
  }

  private constructor(
    private readonly bytes: Buffer,
    starts: Uint32Array,
    ends: Uint32Array,
  ) {
    this.starts = starts;
    this.ends = ends;
    let size = 2;
    while (size < starts.length * 2) size *= 2;
    this.slots = new Uint32Array(size);
    this.mask = size - 1;
    for (let row = 0; row < starts.length; row++) {
      let slot = hash(bytes, starts[row]!, ends[row]!) & this.mask;
      while (this.slots[slot] !== 0) {
        if (this.equal(this.slots[slot]! - 1, bytes, starts[row]!, ends[row]!)) break;
        slot = (slot + 1) & this.mask;
      }
      this.slots[slot] = row + 1;
    }
  }

  get size(): number {
    return this.starts.length;
  }

  /** The feature's row, or undefined for a feature the table does not have. */
  get(feature: string): number | undefined {
    if (feature.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafe(feature.length * 3);
    const n = this.scratch.write(feature, 0, 'utf8');
    let slot = hash(this.scratch, 0, n) & this.mask;
    for (let row = this.slots[slot]!; row !== 0; row = this.slots[slot]!) {
      if (this.equal(row - 1, this.scratch, 0, n)) return row - 1;
      slot = (slot + 1) & this.mask;
    }
    return undefined;
  }

  private equal(row: number, b: Buffer, from: number, to: number): boolean {
    const start = this.starts[row]!;
    const len = this.ends[row]! - start;
    if (len !== to - from) return false;
    for (let i = 0; i < len; i++) if (this.bytes[start + i] !== b[from + i]) return false;
    return true;
  }
}

/** FNV-1a over bytes [from, to). */
function hash(b: Buffer, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}
