import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Strings at least this long are encoded apart, a slice at a time (attachments, long documents). */
const bigChars = 512 * 1024;
/** One slice of a big string: ~1 ms of encoding, then the event loop turns. */
const sliceChars = 512 * 1024;

/**
 * An upstream request body as JSON, without holding the event loop on a large one (issue 25):
 * JSON.stringify of a 30 MiB request with attachments and its UTF-8 encoding took ~75 ms in one
 * piece. Strings of `bigChars` or more are left out of the one JSON.stringify (a placeholder with
 * a random tag stands in), then encoded slice by slice with a turn of the event loop between
 * slices; the result is the same bytes as `JSON.stringify(body)` in UTF-8. A slice may end inside
 * a surrogate pair: JSON.stringify then escapes each half (`\ud83d` `\ude00`), which reads back as
 * the same character. Small bodies stay one string.
 *
 * @example
 * const { body, length } = await jsonBody(request); // pool.request({ body, headers: { 'content-length': String(length) } })
 *
 * Nearly every body has no big string: it is one plain JSON.stringify, returned at once (no
 * promise, so a caller on every request can stay synchronous); the others come as a promise.
 */
export function jsonBody(value: unknown): JsonBody | Promise<JsonBody> {
  return holdsBigString(value, 0) ? slicedJsonBody(value) : { body: JSON.stringify(value) };
}

export interface JsonBody {
  body: string | Readable;
  length?: number;
}

async function slicedJsonBody(value: unknown): Promise<JsonBody> {
  const big: string[] = [];
  const tag = randomBytes(6).toString('hex');
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'string' || v.length < bigChars) return v;
    big.push(v);
    return `${tag}:${big.length - 1}`;
  });
  if (big.length === 0) return { body: text };
  const parts: Buffer[] = [];
  const placeholder = new RegExp(`"${tag}:(\\d+)"`, 'g');
  let from = 0;
  for (const m of text.matchAll(placeholder)) {
    parts.push(Buffer.from(text.slice(from, m.index), 'utf8'));
    const s = big[Number(m[1])]!;
    parts.push(Buffer.from('"'));
    for (let i = 0; i < s.length; i += sliceChars) {
      const piece = JSON.stringify(s.slice(i, i + sliceChars));
      parts.push(Buffer.from(piece.slice(1, -1), 'utf8'));
      await nextTurn();
    }
    parts.push(Buffer.from('"'));
    from = m.index + m[0].length;
  }
  parts.push(Buffer.from(text.slice(from), 'utf8'));
  return { body: Readable.from(parts, { objectMode: false }), length: parts.reduce((n, b) => n + b.length, 0) };
}

/**
 * True when a string of `bigChars` or more is anywhere in `v` (a walk, no allocation). A value
 * nested deeper than the walk goes takes the slicing path: it is correct for any value.
 */
function holdsBigString(v: unknown, depth: number): boolean {
  if (typeof v === 'string') return v.length >= bigChars;
  if (typeof v !== 'object' || v === null) return false;
  if (depth > 300) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (holdsBigString(x, depth + 1)) return true;
    return false;
  }
  for (const k in v) if (holdsBigString((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}
