/**
 * The student encoder's input features (its vocabulary is fixed when the table is built, by
 * scripts/routing-student/): lowercased words plus word-bounded character 4-grams for scripts
 * written with spaces, character 1–2-grams for Chinese and Japanese (written without spaces), and
 * words plus character 2-grams for Korean. The same function builds the table and scores prompts,
 * so the two can never drift apart.
 */

/** The most of a prompt the classifier reads, in characters: the routing signal is in the opening paragraphs, and cost stays linear and bounded. */
export const MAX_CLASSIFIED_CHARS = 2000;

const WORD = /[\p{L}\p{M}\p{N}_]+/gu;
const HAN_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL = /\p{Script=Hangul}/u;
/** Longest word kept as a word feature (longer ones are identifiers or noise; their 4-grams still count). */
const MAX_WORD = 24;

/** Calls `add` with each feature of the text's first MAX_CLASSIFIED_CHARS characters (repeats included). */
export function eachFeature(text: string, add: (feature: string) => void): void {
  const lower = text.slice(0, MAX_CLASSIFIED_CHARS).normalize('NFKC').toLowerCase();
  for (const [word] of lower.matchAll(WORD)) {
    if (HAN_KANA.test(word)) {
      for (let i = 0; i < word.length; i++) {
        add(`c:${word[i]}`);
        if (i + 1 < word.length) add(`c:${word[i]}${word[i + 1]}`);
      }
      continue;
    }
    if (word.length <= MAX_WORD) add(`w:${word}`);
    if (HANGUL.test(word)) {
      for (let i = 0; i + 1 < word.length; i++) add(`k:${word[i]}${word[i + 1]}`);
      continue;
    }
    if (word.length < 3) continue;
    const padded = `<${word}>`;
    for (let i = 0; i + 4 <= padded.length; i++) add(`g:${padded.slice(i, i + 4)}`);
  }
}

/** Feature → count for one text. */
export function featureCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  eachFeature(text, (f) => counts.set(f, (counts.get(f) ?? 0) + 1));
  return counts;
}
