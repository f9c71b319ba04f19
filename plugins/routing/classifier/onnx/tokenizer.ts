/**
 * The tokenizer of an operator's ONNX encoder, read from its Hugging Face `tokenizer.json`: a
 * WordPiece model (BERT-style, e.g. multilingual MiniLM / LaBSE) or a Unigram model
 * (SentencePiece, e.g. XLM-R-based encoders), with the special tokens its post-processor adds.
 * Linear in the text (the classifier hands it a capped prefix), and at most `maxTokens` ids.
 */
import { PieceTokenizer, type VocabularyEntry } from '../tokenizer.js';

interface TokenizerJson {
  normalizer?: { type?: string; lowercase?: boolean; normalizers?: Array<{ type?: string; lowercase?: boolean }> } | null;
  post_processor?: { type?: string; cls?: [string, number]; sep?: [string, number]; single?: Array<{ SpecialToken?: { id: string } }>; special_tokens?: Record<string, { ids: number[] }> } | null;
  model: { type: string; vocab: Record<string, number> | VocabularyEntry[]; unk_token?: string; unk_id?: number; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
}

export interface Tokenizer {
  encode(text: string): number[];
}

const PUNCT = /[\p{P}\p{S}]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function lowercases(n: TokenizerJson['normalizer']): boolean {
  if (!n) return false;
  if (n.type === 'BertNormalizer') return n.lowercase !== false;
  if (n.type === 'Lowercase') return true;
  return (n.normalizers ?? []).some((x) => x.type === 'Lowercase' || (x.type === 'BertNormalizer' && x.lowercase !== false));
}

/** The ids the post-processor puts before and after a single sequence. */
function specials(json: TokenizerJson, vocabId: (t: string) => number | undefined): { before: number[]; after: number[] } {
  const p = json.post_processor;
  if (!p) return { before: [], after: [] };
  if (p.cls && p.sep) return { before: [p.cls[1]], after: [p.sep[1]] };
  if (p.type === 'TemplateProcessing' && p.single) {
    const before: number[] = [];
    const after: number[] = [];
    let seen = false;
    for (const item of p.single) {
      const id = item.SpecialToken?.id;
      if (!id) {
        seen = true;
        continue;
      }
      const ids = p.special_tokens?.[id]?.ids ?? [vocabId(id)].filter((x): x is number => x !== undefined);
      (seen ? after : before).push(...ids);
    }
    return { before, after };
  }
  return { before: [], after: [] };
}

class WordPiece implements Tokenizer {
  private readonly vocab: Map<string, number>;
  private readonly unk: number;
  private readonly prefix: string;

  constructor(json: TokenizerJson, private readonly lower: boolean, private readonly maxTokens: number) {
    this.vocab = new Map(Object.entries(json.model.vocab as Record<string, number>));
    this.unk = this.vocab.get(json.model.unk_token ?? '[UNK]') ?? 0;
    this.prefix = json.model.continuing_subword_prefix ?? '##';
    const s = specials(json, (t) => this.vocab.get(t));
    this.before = s.before;
    this.after = s.after;
  }

  private readonly before: number[];
  private readonly after: number[];

  encode(text: string): number[] {
    let t = text.normalize('NFKC');
    if (this.lower) t = t.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
    const ids = [...this.before];
    const room = this.maxTokens - this.after.length;
    const words = t.split(/\s+/u).flatMap((w) => w.split(/([\p{P}\p{S}]|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/u)).filter(Boolean);
    for (const word of words) {
      if (ids.length >= room) break;
      if (PUNCT.test(word) || CJK.test(word) || word.length > 100) {
        ids.push(this.vocab.get(word) ?? this.unk);
        continue;
      }
      const pieces: number[] = [];
      let start = 0;
      while (start < word.length) {
        let end = word.length;
        let id: number | undefined;
        while (end > start) {
          id = this.vocab.get((start > 0 ? this.prefix : '') + word.slice(start, end));
          if (id !== undefined) break;
          end--;
        }
        if (id === undefined) {
          pieces.length = 0;
          pieces.push(this.unk);
          break;
        }
        pieces.push(id);
        start = end;
      }
      ids.push(...pieces);
    }
    return [...ids.slice(0, room), ...this.after];
  }
}

class Unigram implements Tokenizer {
  private readonly pieces: PieceTokenizer;
  private readonly before: number[];
  private readonly after: number[];

  constructor(json: TokenizerJson, private readonly lower: boolean, private readonly maxTokens: number) {
    const vocab = json.model.vocab as VocabularyEntry[];
    this.pieces = new PieceTokenizer(vocab, 0, json.model.unk_id ?? 0);
    const index = new Map(vocab.map(([p], i) => [p, i]));
    const s = specials(json, (t) => index.get(t));
    this.before = s.before;
    this.after = s.after;
  }

  encode(text: string): number[] {
    const ids = this.pieces.encode(this.lower ? text.toLowerCase() : text);
    return [...this.before, ...ids.slice(0, this.maxTokens - this.before.length - this.after.length), ...this.after];
  }
}

export function loadTokenizer(json: TokenizerJson, maxTokens: number): Tokenizer {
  const lower = lowercases(json.normalizer);
  if (json.model.type === 'WordPiece') return new WordPiece(json, lower, maxTokens);
  if (json.model.type === 'Unigram') return new Unigram(json, lower, maxTokens);
  throw new Error(`tokenizer.json: model type ${json.model.type} is not supported (WordPiece or Unigram)`);
}
