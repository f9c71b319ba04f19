import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * Token counts that cost linear time and a bounded amount of work per request (issue 25).
 *
 * cl100k's byte-pair merge is quadratic in the length of one pre-token (a run of letters, of
 * punctuation or of whitespace): 200,000 × "a" took 10 s. So a text is cut at every run longer
 * than `longRun` characters; the stretches between runs are counted exactly (each of their
 * pre-tokens is short), and each long run is counted in pieces of `longRun` characters, with a
 * token of slack per piece for the hold; its certain lower bound is one token per
 * `maxTokenBytes` UTF-8 bytes (the longest cl100k token; a unit test reads it from the
 * vocabulary). A request also has a tokenizing budget: once that many characters were tokenized
 * for it, its remaining texts are bounded by their UTF-8 size without being read by the tokenizer.
 */

/** Longest cl100k token in UTF-8 bytes (128 spaces): every token covers at most this many bytes. */
export const maxTokenBytes = 128;

/** Runs of one character class longer than this are counted in pieces this long (README "Bounded tokenizer work"). */
export const longRun = 32;
const runs = new RegExp(`\\p{L}{${longRun + 1},}|[^\\s\\p{L}\\p{N}]{${longRun + 1},}|\\s{${longRun + 1},}`, 'gu');

/** Specials such as `<|endoftext|>` are plain text in a prompt; never let them throw or count as one. */
const asText = { disallowedSpecial: new Set<string>() };

type CountTokens = (text: string, options: typeof asText) => number;
interface Cl100k { countTokens: CountTokens; setMergeCacheSize(size: number): void }
let tables: CountTokens | undefined;

/**
 * Pre-tokens whose merges the tokenizer remembers. Its default (100,000) grows by one entry for
 * every distinct word it ever sees: under traffic that is tens of MB of old generation kept for
 * ever, promoted a few hundred bytes per request. 10,000 covers a language's common words; a
 * miss costs a merge of a short pre-token (README "Bounded tokenizer work").
 */
export const mergeCacheEntries = 10_000;

/**
 * cl100k's count. Its tables (~30 MB of RSS, ~0.3 s to build) load with the first count, not at
 * start: an instance that has served no chat request does not hold them (bench/README.md "Idle
 * memory"). Loaded synchronously (the package's CommonJS build), so every count is a real count.
 */
function cl100k(text: string, options: typeof asText): number {
  if (!tables) {
    const loaded = createRequire(import.meta.url)('gpt-tokenizer/encoding/cl100k_base') as Cl100k;
    loaded.setMergeCacheSize(mergeCacheEntries);
    tables = loaded.countTokens;
  }
  return tables(text, options);
}

/** What is known of one text's tokens. */
export interface TextCount {
  /** Certainly at least this many (no margin). */
  lower: number;
  /** The count where the text was tokenized; a bounded stretch counts one token per byte. */
  tokens: number;
  /** Characters the tokenizer read for it (0 for a cached or bounded text). */
  work: number;
  /** True when every character was counted (no bound stands in for a part of it). */
  exact: boolean;
  /** True when the whole text was bounded by its UTF-8 size (the budget did not cover it). */
  bySize: boolean;
  /** Tokens the count may be short by (a token at each cut of a long run): the hold adds them. */
  slack: number;
}

/**
 * Counts of recent texts: a conversation resends its history every turn, so most texts were
 * counted moments ago. Keyed by the text itself when short, else by its length and SHA-1, so the
 * cache holds no large strings. Evicted in insertion order with a second chance for entries used
 * since they were last looked at (CLOCK, close to least recently used): a hit only sets a flag.
 * Moving an entry to the end on every hit (delete, then set) made this process-long Map rebuild
 * its table every few dozen requests, and replaced tables in the old generation kept the requests
 * after them alive through scavenges (kernel/pipeline/roster.ts; bench/README.md "Ninth look").
 */
const recent = new Map<string, { count: TextCount; used: boolean }>();
const recentMax = 4096;
/** Longer texts are not cached: no budget counts them (tokenizeMaxChars is far below this). */
const cachedMaxChars = 1_000_000;
const keyOf = (text: string): string => (text.length <= 256 ? text : `${text.length}:${createHash('sha1').update(text).digest('base64')}`);

function remember(key: string, c: TextCount): TextCount {
  while (recent.size >= recentMax) {
    const [oldest, entry] = recent.entries().next().value!;
    recent.delete(oldest);
    if (!entry.used) break;
    entry.used = false;
    recent.set(oldest, entry);
  }
  recent.set(key, { count: c, used: false });
  return c;
}

/** A text the budget no longer covers: bounded by its size alone. */
export function boundedBySize(text: string): TextCount {
  // A huge text is bounded by its length without reading it (UTF-8 takes 1 to 3 bytes per UTF-16
  // unit); measuring 31 MB of UTF-8 took ~8 ms, and such a text exceeds any window either way.
  if (text.length > cachedMaxChars) return { lower: Math.ceil(text.length / maxTokenBytes), tokens: 3 * text.length, work: 0, exact: false, bySize: true, slack: 0 };
  const bytes = Buffer.byteLength(text, 'utf8');
  return { lower: Math.ceil(bytes / maxTokenBytes), tokens: bytes, work: 0, exact: false, bySize: true, slack: 0 };
}

/**
 * Counts a text in linear time: exact when it has no long run. A long run is counted in pieces of
 * `longRun` characters (each piece's merge step is short); a cut can change the count by about a
 * token either side, so the run's certain lower bound stays one token per 128 bytes, and the hold
 * adds a token per piece (`slack`).
 */
function countLinear(text: string): TextCount {
  let tokens = 0;
  let runLower = 0;
  let runCounted = 0;
  let slack = 0;
  let cuts = 0;
  let from = 0;
  runs.lastIndex = 0;
  for (let m = runs.exec(text); m !== null; m = runs.exec(text)) {
    if (m.index > from) tokens += cl100k(text.slice(from, m.index), asText);
    const run = m[0];
    runLower += Math.ceil(Buffer.byteLength(run, 'utf8') / maxTokenBytes);
    for (let i = 0; i < run.length; ) {
      // Never split a surrogate pair: a piece ends before a high surrogate.
      let end = Math.min(i + longRun, run.length);
      if (end < run.length && run.charCodeAt(end - 1) >= 0xd800 && run.charCodeAt(end - 1) <= 0xdbff) end--;
      runCounted += cl100k(run.slice(i, end), asText);
      slack++;
      i = end;
    }
    from = m.index + run.length;
    cuts++;
  }
  if (cuts === 0) {
    const n = cl100k(text, asText);
    return { lower: n, tokens: n, work: text.length, exact: true, bySize: false, slack: 0 };
  }
  if (from < text.length) tokens += cl100k(text.slice(from), asText);
  // A cut may split the pre-token that holds a run's neighbouring character: a token either side.
  return { lower: Math.max(0, tokens + runLower - 2 * cuts), tokens: tokens + runCounted, work: text.length, exact: false, bySize: false, slack: slack + 2 * cuts };
}

/**
 * One text's count within a request's remaining tokenizing `budget` (characters): cached counts
 * cost nothing; a text longer than the budget is bounded by its size.
 *
 * @example
 * countText('Hello there', 32_000) // { lower: 2, tokens: 2, work: 11, exact: true, bySize: false }
 */
export function countText(text: string, budget: number): TextCount {
  if (text.length === 0) return { lower: 0, tokens: 0, work: 0, exact: true, bySize: false, slack: 0 };
  // Texts the budget could not count are never hashed either (hashing 31 MB took ~60 ms).
  if (text.length > cachedMaxChars) return text.length > budget ? boundedBySize(text) : countLinear(text);
  const key = keyOf(text);
  const known = recent.get(key);
  if (known) {
    known.used = true;
    return { ...known.count, work: 0 };
  }
  if (text.length > budget) return boundedBySize(text);
  return remember(key, countLinear(text));
}
