import type { IncomingHttpHeaders } from 'node:http';
import { isToken, nameIs } from '../http/token.js';

/**
 * The HTTP/1.1 response reader of the upstream connections (connection.ts): a status line and
 * headers, then the body framed by Content-Length, chunked transfer coding or the connection's
 * close (RFC 9112 §6.3). A provider's reply is small and arrives in one or two reads, so the head
 * is read as one latin1 string and split; the body's bytes are handed on as slices of what the
 * socket read, never copied.
 */

/**
 * A reply's head as read: the header lines are made into an object only when asked for (an error
 * reply's Retry-After, a check): a chat reply's own headers are never read, and building them cost
 * a name, a lower-cased name and a value string per line on every call.
 */
export class ResponseHead {
  private parsed: IncomingHttpHeaders | undefined;

  constructor(
    private readonly text: string,
    private readonly from: number,
    /** The Keep-Alive header's value (how long the server keeps an idle connection), if sent. */
    readonly keepAliveHint: string | undefined,
  ) {}

  /** Lower-case names; repeats as node:http gives them (set-cookie a list, first wins for single-valued ones, others joined). */
  get headers(): IncomingHttpHeaders {
    return (this.parsed ??= headerObject(this.text, this.from));
  }
}

/** Where a parsed response goes: its head once, its body's bytes, then its end. */
export interface ResponseSink {
  head(statusCode: number, head: ResponseHead, keepAlive: boolean): void;
  data(bytes: Buffer): void;
  end(): void;
}

/** Longest head accepted, as node:http's default `maxHeaderSize`. */
const maxHead = 16 * 1024;
/** Longest chunk-size line or trailer section (extensions included). */
const maxLine = 4 * 1024;

type State = 'idle' | 'head' | 'fixed' | 'size' | 'chunk' | 'chunk-end' | 'trailers' | 'until-close' | 'done';

/** Headers whose repeats node:http drops (the first wins); other repeats are joined with ', '. */
const firstWins = new Set(['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']);

/** Where the line starting at `at` ends (its CR LF, or the text's end). */
function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\r\n', at);
  return end < 0 ? text.length : end;
}

/** A header name or token as RFC 9110 defines it (the reply's names here, the request's in the pool). */
export const httpToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** `HTTP/1.x NNN` (then a space or the line's end): the status code, or -1. */
function statusOf(text: string, lineEnd: number): number {
  if (!text.startsWith('HTTP/1.') || (text.charCodeAt(7) !== 48 && text.charCodeAt(7) !== 49) || text.charCodeAt(8) !== 32) return -1;
  const a = text.charCodeAt(9);
  const b = text.charCodeAt(10);
  const c = text.charCodeAt(11);
  if (a < 49 || a > 57 || !isDigit(b) || !isDigit(c) || (lineEnd > 12 && text.charCodeAt(12) !== 32) || lineEnd < 12) return -1;
  return (a - 48) * 100 + (b - 48) * 10 + (c - 48);
}

/** The header lines from `at` as an object (already checked by the parser's `head`). */
function headerObject(text: string, at: number): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  while (at < text.length) {
    const end = lineEnd(text, at);
    const colon = text.indexOf(':', at);
    const key = text.slice(at, colon).toLowerCase();
    const value = text.slice(colon + 1, end).trim();
    at = end + 2;
    const seen = headers[key];
    if (seen === undefined) headers[key] = key === 'set-cookie' ? [value] : value;
    else if (key === 'set-cookie') (seen as string[]).push(value);
    else if (!firstWins.has(key)) headers[key] = `${seen as string}, ${value}`;
  }
  return headers;
}

/** A reply that is not HTTP/1.1: its `code` names the fault as llhttp's do (transportFailureOf: 'reset'). */
export function parseError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(`upstream sent an invalid response: ${message}`), { code });
}

export class ResponseParser {
  private state: State = 'idle';
  /** Bytes of a head, chunk-size line or trailer section not complete yet. */
  private pending: Buffer | undefined;
  /** Bytes left of the fixed-length body or of the current chunk; of the CRLF after a chunk. */
  private left = 0;
  private bodiless = false;

  constructor(private readonly sink: ResponseSink) {}

  /** Ready for the next response; `bodiless` for a HEAD request's. */
  expect(bodiless = false): void {
    this.state = 'head';
    this.pending = undefined;
    this.bodiless = bodiless;
  }

  /** True while a response is being read (after `expect`, before its end). */
  get reading(): boolean {
    return this.state !== 'idle' && this.state !== 'done';
  }

  /** True once the head was read and the body has not ended. */
  get inBody(): boolean {
    return this.reading && this.state !== 'head';
  }

  /** The connection closed: true when that ends the body (no length was given), false when the reply broke off. */
  closed(): boolean {
    if (this.state !== 'until-close') return false;
    this.state = 'done';
    this.sink.end();
    return true;
  }

  /** Reads what the socket delivered; throws a `parseError` on bytes that are not a valid reply. */
  feed(buf: Buffer): void {
    let at = 0;
    while (at < buf.length) {
      switch (this.state) {
        case 'head': {
          const data = this.pending ? Buffer.concat([this.pending, buf.subarray(at)]) : at > 0 ? buf.subarray(at) : buf;
          const end = data.indexOf('\r\n\r\n');
          if (end < 0) {
            if (data.length > maxHead) throw parseError('HPE_HEADER_OVERFLOW', 'header section too large');
            this.pending = data;
            return;
          }
          if (end > maxHead) throw parseError('HPE_HEADER_OVERFLOW', 'header section too large');
          this.pending = undefined;
          buf = data;
          at = end + 4;
          this.head(data.toString('latin1', 0, end));
          break;
        }
        case 'fixed':
        case 'chunk': {
          const n = Math.min(this.left, buf.length - at);
          this.sink.data(at === 0 && n === buf.length ? buf : buf.subarray(at, at + n));
          at += n;
          this.left -= n;
          if (this.left === 0) {
            if (this.state === 'fixed') this.complete();
            else {
              this.state = 'chunk-end';
              this.left = 2;
            }
          }
          break;
        }
        case 'chunk-end': {
          // The CRLF after a chunk's data, possibly split between reads.
          const want = this.left === 2 ? 13 : 10;
          if (buf[at] !== want) throw parseError('HPE_INVALID_CHUNK_SIZE', 'chunk not followed by CRLF');
          at++;
          if (--this.left === 0) this.state = 'size';
          break;
        }
        case 'size':
        case 'trailers': {
          const data = this.pending ? Buffer.concat([this.pending, buf.subarray(at)]) : at > 0 ? buf.subarray(at) : buf;
          const end = this.state === 'size' ? data.indexOf('\r\n') : trailersEnd(data);
          if (end < 0) {
            if (data.length > maxLine) throw parseError('HPE_INVALID_CHUNK_SIZE', 'chunk-size line too long');
            this.pending = data;
            return;
          }
          this.pending = undefined;
          buf = data;
          if (this.state === 'trailers') {
            at = end;
            this.complete();
            break;
          }
          at = end + 2;
          const line = data.toString('latin1', 0, end);
          const semi = line.indexOf(';');
          const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw parseError('HPE_INVALID_CHUNK_SIZE', 'invalid chunk size');
          const size = parseInt(hex, 16);
          if (size === 0) this.state = 'trailers';
          else {
            this.state = 'chunk';
            this.left = size;
          }
          break;
        }
        case 'until-close':
          this.sink.data(at > 0 ? buf.subarray(at) : buf);
          return;
        default:
          // Bytes after the response's end, or before any request was sent.
          throw parseError('HPE_UNEXPECTED_CONTENT', 'data after the end of the response');
      }
    }
  }

  private complete(): void {
    this.state = 'done';
    this.sink.end();
  }

  private head(text: string): void {
    // Line by line with indexOf rather than split, and only the framing headers' values sliced:
    // the rest are made into an object when someone asks (ResponseHead).
    const first = lineEnd(text, 0);
    const statusCode = statusOf(text, first);
    if (statusCode < 0) throw parseError('HPE_INVALID_CONSTANT', 'not an HTTP/1.x status line');
    let connection: string | undefined;
    let te: string | undefined;
    let cl: string | undefined;
    let hint: string | undefined;
    let repeated = false;
    for (let at = first + 2; at < text.length; ) {
      const end = lineEnd(text, at);
      const colon = text.indexOf(':', at);
      // No obsolete line folding (a line starting with whitespace), as llhttp refuses it.
      if (colon < 0 || colon >= end || !isToken(text, at, colon)) throw parseError('HPE_INVALID_HEADER_TOKEN', 'invalid header line');
      const n = colon - at;
      if (n === 10 && nameIs(text, at, 'connection')) {
        repeated ||= connection !== undefined;
        connection = text.slice(colon + 1, end).trim();
      } else if (n === 10 && nameIs(text, at, 'keep-alive')) {
        repeated ||= hint !== undefined;
        hint = text.slice(colon + 1, end).trim();
      } else if (n === 14 && nameIs(text, at, 'content-length')) {
        cl ??= text.slice(colon + 1, end).trim();
      } else if (n === 17 && nameIs(text, at, 'transfer-encoding')) {
        repeated ||= te !== undefined;
        te = text.slice(colon + 1, end).trim();
      }
      at = end + 2;
    }
    if (repeated) {
      // Repeats are joined as node:http joins them: read from the object (a rare reply).
      const h = headerObject(text, first + 2);
      connection = h.connection;
      te = h['transfer-encoding'];
      hint = h['keep-alive'] as string | undefined;
    }
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (statusCode < 200) return;
    const head = new ResponseHead(text, first + 2, hint);
    connection = connection?.toLowerCase();
    let keepAlive = text.charCodeAt(7) === 49 ? !connection?.includes('close') : !!connection?.includes('keep-alive');
    te = te?.toLowerCase();
    let framing: 'none' | 'fixed' | 'chunked' | 'until-close';
    if (this.bodiless || statusCode === 204 || statusCode === 304) framing = 'none';
    else if (te !== undefined) {
      framing = te.endsWith('chunked') ? 'chunked' : 'until-close';
      // Both framings given (RFC 9112 §6.3: chunked wins), or one that ends at close: not reused.
      if (cl !== undefined || framing === 'until-close') keepAlive = false;
    } else if (cl !== undefined) {
      if (!/^\d{1,15}$/.test(cl)) throw parseError('HPE_INVALID_CONTENT_LENGTH', 'invalid Content-Length');
      framing = Number(cl) === 0 ? 'none' : 'fixed';
      this.left = Number(cl);
    } else {
      framing = 'until-close';
      keepAlive = false;
    }
    this.state = framing === 'fixed' ? 'fixed' : framing === 'chunked' ? 'size' : framing === 'until-close' ? 'until-close' : 'done';
    this.sink.head(statusCode, head, keepAlive);
    if (framing === 'none') this.sink.end();
  }
}

/** The end of a trailer section (an empty line), or -1: `\r\n` alone when there are no trailers. */
function trailersEnd(data: Buffer): number {
  if (data.length >= 2 && data[0] === 13 && data[1] === 10) return 2;
  const end = data.indexOf('\r\n\r\n');
  return end < 0 ? -1 : end + 4;
}
