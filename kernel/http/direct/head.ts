import { isToken, nameIs } from '../token.js';

/**
 * The head of a request the front answers itself (connection.ts): only the plainest HTTP/1.1 form
 * is taken here, and anything else is left to node:http, which answers the unusual cases (chunked
 * bodies, Expect, upgrades, repeated or malformed headers) with its own tested parser.
 */
export interface PlainHead {
  method: string;
  url: string;
  /** Lowercased names, as node:http gives them. */
  headers: Record<string, string>;
  contentLength: number;
  /** The client asked for keep-alive (HTTP/1.1's default) rather than `connection: close`. */
  keepAlive: boolean;
}

/** node:http's default limit on a request head (larger heads get its 431). */
export const maxHeadBytes = 16 * 1024;
/** More header lines than any client sends; node:http takes the rare request with more. */
const maxHeaderLines = 100;

/**
 * Whether text[from, to) is a field value held here: printable ASCII and tabs only, so no
 * control characters (CR and LF included) and no bytes above 0x7f, which node:http takes as it
 * always has.
 */
function plainValue(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) return false;
  }
  return true;
}

/** A request target in origin form: `/`, then no spaces or control characters. */
function originForm(text: string, from: number, to: number): boolean {
  if (text.charCodeAt(from) !== 0x2f) return false;
  for (let i = from + 1; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return false;
  }
  return true;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09;

/**
 * The names nearly every API request carries, by length: a name read in any case is one of these
 * strings without a slice and a lower-cased copy of it per line.
 */
const commonNames = new Map<number, string[]>();
for (const name of ['host', 'accept', 'user-agent', 'content-type', 'content-length', 'authorization', 'connection', 'accept-encoding', 'x-stainless-os', 'x-stainless-lang', 'x-stainless-arch', 'x-stainless-runtime', 'x-stainless-retry-count', 'x-stainless-package-version', 'x-stainless-runtime-version', 'x-stainless-timeout']) {
  const list = commonNames.get(name.length) ?? [];
  list.push(name);
  commonNames.set(name.length, list);
}

/** The lower-case name of text[from, to) (a token already checked): a common name's own string, or a new one. */
function nameOf(text: string, from: number, to: number): string {
  const candidates = commonNames.get(to - from);
  if (candidates !== undefined) {
    for (const name of candidates) if (nameIs(text, from, name)) return name;
  }
  // Lowercasing a name that is already lowercase gives the same string back.
  return text.slice(from, to).toLowerCase();
}

/**
 * The head in `text` (latin1, up to and without the blank line) when it is plain: request line
 * `METHOD /path HTTP/1.1`, each header once, a decimal Content-Length, no Transfer-Encoding,
 * Expect or Upgrade, a Host. Otherwise undefined.
 */
export function parsePlainHead(text: string): PlainHead | undefined {
  let eol = text.indexOf('\r\n');
  const lineEnd = eol === -1 ? text.length : eol;
  const sp1 = text.indexOf(' ');
  const sp2 = sp1 === -1 ? -1 : text.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 > lineEnd || lineEnd - sp2 !== 9 || !text.startsWith('HTTP/1.1', sp2 + 1)) return undefined;
  if (!isToken(text, 0, sp1) || !originForm(text, sp1 + 1, sp2)) return undefined;
  const headers: Record<string, string> = {};
  let lines = 0;
  let contentLength = -1;
  let keepAlive = true;
  let host = false;
  while (eol !== -1) {
    const start = eol + 2;
    eol = text.indexOf('\r\n', start);
    const end = eol === -1 ? text.length : eol;
    if (++lines > maxHeaderLines) return undefined;
    const colon = text.indexOf(':', start);
    if (colon === -1 || colon >= end || !isToken(text, start, colon) || !plainValue(text, colon + 1, end)) return undefined;
    let from = colon + 1;
    let to = end;
    while (from < to && isSpace(text.charCodeAt(from))) from++;
    while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
    const key = nameOf(text, start, colon);
    const value = text.slice(from, to);
    if (headers[key] !== undefined || key === '__proto__') return undefined;
    switch (key) {
      case 'content-length':
        if (!/^\d{1,15}$/.test(value)) return undefined;
        contentLength = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return undefined;
      case 'connection': {
        const v = value.toLowerCase();
        if (v === 'close') keepAlive = false;
        else if (v !== 'keep-alive') return undefined;
        break;
      }
      case 'host':
        host = true;
        break;
    }
    headers[key] = value;
  }
  if (contentLength === -1 || !host) return undefined;
  const method = sp1 === 4 && text.startsWith('POST') ? 'POST' : text.slice(0, sp1);
  return { method, url: text.slice(sp1 + 1, sp2), headers, contentLength, keepAlive };
}
