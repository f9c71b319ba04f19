/**
 * SentencePiece (unigram) tokenizer for the USE-Lite vocabulary. Same pieces and Viterbi choice as
 * the one in @energetic-ai/embeddings, but index-based: that one slices the remaining symbol array
 * at every position, which is quadratic in the prompt length (up to 2 ms on 300 characters).
 */

/** One vocabulary entry as the model package ships it: [piece, unigram log-probability]. */
export type VocabularyEntry = [string, number];

const SEPARATOR = '\u2581';
/** The first six ids are reserved (unknown, <s>, </s>, extra ids) and never matched. */
const RESERVED = 6;
const UNKNOWN = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Vocabulary id when a piece ends here, else -1. */
  id: number;
  score: number;
}

function node(): TrieNode {
  return { children: new Map(), id: -1, score: 0 };
}

export class PieceTokenizer {
  private readonly root = node();

  /** `reserved`: leading ids never matched (USE-Lite's six); `unknown`: the id of an unknown symbol. */
  constructor(readonly vocabulary: VocabularyEntry[], reserved = RESERVED, private readonly unknown = UNKNOWN) {
    for (let id = reserved; id < vocabulary.length; id++) {
      if (id === unknown) continue;
      const [piece, score] = vocabulary[id]!;
      let at = this.root;
      for (const symbol of piece) {
        let next = at.children.get(symbol);
        if (!next) at.children.set(symbol, (next = node()));
        at = next;
      }
      at.id = id;
      at.score = score;
    }
  }

  /** Piece ids of the text, in order; runs of unknown symbols collapse into one unknown id. */
  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = Array.from(SEPARATOR + normalized.replace(/ /g, SEPARATOR));
    const n = symbols.length;
    const best = new Float64Array(n + 1);
    const bestId = new Int32Array(n + 1);
    const bestLength = new Int32Array(n + 1);
    // Ends are reached in increasing start order, as in the reference, so ties resolve identically.
    for (let start = 0; start < n; start++) {
      let at: TrieNode | undefined = this.root;
      let matched = false;
      for (let end = start; end < n && at; end++) {
        at = at.children.get(symbols[end]!);
        if (at && at.id >= 0) {
          matched = true;
          this.offer(best, bestId, bestLength, end + 1, at.score + best[start]!, at.id, end + 1 - start);
        }
      }
      if (!matched) this.offer(best, bestId, bestLength, start + 1, best[start]!, this.unknown, 1);
    }
    const ids: number[] = [];
    for (let at = n; at > 0; at -= bestLength[at]!) ids.push(bestId[at]!);
    ids.reverse();
    return ids.filter((id, i) => !(id === this.unknown && ids[i - 1] === this.unknown));
  }

  private offer(best: Float64Array, bestId: Int32Array, bestLength: Int32Array, end: number, score: number, id: number, length: number): void {
    if (bestLength[end] === 0 || score >= best[end]!) {
      best[end] = score;
      bestId[end] = id;
      bestLength[end] = length;
    }
  }
}
