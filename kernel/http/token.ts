/**
 * RFC 9110 tokens (header names, methods) read in place in a head's text: checked a character at
 * a time, with no string sliced out to test. Shared by the front's own request reader
 * (direct/head.ts) and the upstream reply parser (upstream/response-parser.ts).
 */

/** Token characters by character code. */
const tokenChars = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") tokenChars[c.charCodeAt(0)] = 1;

/** Whether text[from, to) is a non-empty token. */
export function isToken(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || tokenChars[c] === 0) return false;
  }
  return true;
}

/**
 * Whether the token at text[from, from + name.length) is `name` (lower case) in any case. Token
 * characters other than letters keep their code under `| 0x20` or are not in header names.
 */
export function nameIs(text: string, from: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) if ((text.charCodeAt(from + i) | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}
