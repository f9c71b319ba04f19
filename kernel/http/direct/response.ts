import { EventEmitter } from 'node:events';
import { STATUS_CODES, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { DirectRequest } from './request.js';
import { idHeaders } from '../response.js';

/** What a response needs of its connection. */
export interface ResponseLine {
  readonly socket: Socket;
  /** Seconds a kept-alive connection may idle (the Keep-Alive header's timeout). */
  readonly keepAliveSeconds: number;
  /** The connection ends after this response (the client asked, or the service is closing it). */
  closing(): boolean;
  /** The response's last bytes were handed to the socket; `close` says the connection must end. */
  responded(close: boolean): void;
}

const tokenName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Names checked once: the routes send the same few on every response. */
const checkedNames = new Set<string>();
function validName(name: string): boolean {
  if (checkedNames.has(name)) return true;
  if (!tokenName.test(name)) return false;
  if (checkedNames.size < 1000) checkedNames.add(name);
  return true;
}
const seenDate = 1;
const seenConnection = 2;
const seenLength = 4;
const seenEncoding = 8;
/** node:http refuses header values with control characters other than tab (no header injection). */
const badValue = /[^\t\x20-\x7e\x80-\xff]/;
const nonAscii = /[^\x00-\x7f]/;

let dateSecond = 0;
let dateText = '';
/** The Date header's value, made once a second (node:http keeps it the same way). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/** `close` a tick after `finish`, as node's response (a function of its own: no closure per response). */
function closeLater(res: DirectResponse): void {
  res.closed();
}

/** The status line of a status with its standard reason, made once per status. */
const statusLines = new Map<number, string>();
function statusLine(status: number, message: string | undefined): string {
  if (message !== undefined) return `HTTP/1.1 ${status} ${message}\r\n`;
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    if (statusLines.size < 200) statusLines.set(status, line);
  }
  return line;
}

let keepAliveFor = -1;
let keepAliveText = '';
/** `Connection: keep-alive` and the Keep-Alive timeout, made once (the front's setting does not change). */
function keepAliveLines(seconds: number): string {
  if (seconds !== keepAliveFor) {
    keepAliveFor = seconds;
    keepAliveText = `Connection: keep-alive\r\nKeep-Alive: timeout=${seconds}\r\n`;
  }
  return keepAliveText;
}

/**
 * The lines a head adds itself, as node:http does (ownLines fills it for the head being made and
 * it is read at once: one object, not one per response). Empty strings are lines not sent.
 */
const own = { date: '', connection: '', length: '', chunked: false };

/** CR LF, as bytes. */
function crlf(buf: Buffer, at: number): number {
  buf[at] = 13;
  buf[at + 1] = 10;
  return at + 2;
}

function invalidHeader(name: string): never {
  const err = new TypeError(`Invalid character in header content ["${name}"]`) as TypeError & { code: string };
  err.code = 'ERR_INVALID_CHAR';
  throw err;
}

type Stored = { name: string; value: OutgoingHttpHeader };

/**
 * The response to a DirectRequest, with the part of node's ServerResponse the routes it serves
 * use: setHeader / writeHead (request ids added, as FrontResponse does), write, end, flushHeaders,
 * `drain`, `finish` and `close`. The head goes out as node:http writes it (Date, Connection,
 * Keep-Alive, a Content-Length or chunked framing) and, unless flushed first, in one socket write
 * with the first body bytes.
 */
export class DirectResponse extends EventEmitter {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  writableNeedDrain = false;
  readonly sendDate = true;
  private stored: Map<string, Stored> | undefined = undefined;
  /** The head, made but not yet written. */
  private pendingHead = '';
  /**
   * A writeHead's flat header list, checked but not yet made into a head: a whole body's `end`
   * writes it and the body straight into the bytes sent (sendWhole), with no string per line.
   */
  private deferred: OutgoingHttpHeader[] | undefined;
  private chunked = false;
  private closeAfter = false;
  private noBody = false;
  /** Which of the headers that change framing the head being made has (seen* bits). */
  private seen = 0;

  constructor(
    readonly req: DirectRequest,
    private readonly line: ResponseLine,
  ) {
    super();
  }

  get socket(): Socket | null {
    return this.destroyed ? null : this.line.socket;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    if (this.headersSent) {
      const err = new Error('Cannot set headers after they are sent to the client') as Error & { code: string };
      err.code = 'ERR_HTTP_HEADERS_SENT';
      throw err;
    }
    (this.stored ??= new Map()).set(name.toLowerCase(), { name, value });
    return this;
  }

  appendHeader(name: string, value: OutgoingHttpHeader): this {
    const key = name.toLowerCase();
    const had = this.stored?.get(key);
    if (!had) return this.setHeader(name, value);
    const list = ([] as Array<string | number>).concat(had.value as string, value as string);
    had.value = list.map(String);
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.stored?.get(name.toLowerCase())?.value;
  }

  writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    if (this.headersSent) {
      const err = new Error('Cannot write headers after they are sent to the client') as Error & { code: string };
      err.code = 'ERR_HTTP_HEADERS_SENT';
      throw err;
    }
    let list = headers;
    if (typeof reason === 'string') this.statusMessage = reason;
    else list = reason;
    this.statusCode = statusCode;
    const id = this.req.svcRequestId;
    // A flat list gets the ids when its head is made (makeHead, sendWhole): pushed onto it, the
    // caller's list of exact length grew to room for sixteen more.
    if (!Array.isArray(list) || this.stored) {
      this.setHeader(idHeaders[0], id);
      this.setHeader(idHeaders[1], id);
    }
    let flat: OutgoingHttpHeader[] | undefined;
    if (this.stored) {
      // As node: headers given here override those set before.
      if (Array.isArray(list)) {
        for (let i = 0; i < list.length; i += 2) this.stored.delete(String(list[i]).toLowerCase());
        for (let i = 0; i < list.length; i += 2) this.appendHeader(String(list[i]), list[i + 1]!);
      } else if (list) for (const k in list) if (list[k] !== undefined) this.setHeader(k, list[k]!);
    } else if (Array.isArray(list)) flat = list;
    else if (list) for (const k in list) if (list[k] !== undefined) this.setHeader(k, list[k]!);
    if (flat) {
      // Checked now, as node:http checks them in writeHead; made into the head with the body.
      this.seen = 0;
      for (let i = 0; i < flat.length; i += 2) this.check(String(flat[i]), flat[i + 1]!);
      this.check(idHeaders[0], id);
      this.deferred = flat;
      this.headersSent = true;
    } else this.makeHead(undefined, -1);
    return this;
  }

  /** The deferred head made now (a write, a flush, or a body sendWhole does not take). */
  private madeHead(bodyLength: number): void {
    const flat = this.deferred;
    if (!flat) return;
    this.deferred = undefined;
    this.makeHead(flat, bodyLength);
  }

  /** Builds the head (not yet written): `bodyLength` ≥ 0 when `end` knows the whole body. */
  private makeHead(flat: OutgoingHttpHeader[] | undefined, bodyLength: number): void {
    let head = statusLine(this.statusCode, this.statusMessage);
    this.seen = 0;
    if (flat) {
      for (let i = 0; i < flat.length; i += 2) head += this.field(String(flat[i]), flat[i + 1]!);
      const id = this.req.svcRequestId;
      head += this.field(idHeaders[0], id) + this.field(idHeaders[1], id);
    } else if (this.stored) for (const s of this.stored.values()) head += this.field(s.name, s.value);
    const o = this.ownLines(bodyLength);
    if (o.date) head += `Date: ${o.date}\r\n`;
    head += o.connection;
    if (o.length) head += `Content-Length: ${o.length}\r\n`;
    else if (o.chunked) {
      head += 'Transfer-Encoding: chunked\r\n';
      this.chunked = true;
    }
    this.pendingHead = `${head}\r\n`;
    this.headersSent = true;
  }

  /**
   * The lines the head adds to the caller's (node:http's rules): Date and Connection unless given,
   * Keep-Alive with keep-alive, then Content-Length when the body's length is known (`bodyLength`
   * ≥ 0) or chunked framing, unless the caller framed the body or the status has none.
   */
  private ownLines(bodyLength: number): typeof own {
    const status = this.statusCode;
    if (this.line.closing()) this.closeAfter = true;
    this.noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
    own.date = (this.seen & seenDate) === 0 ? httpDate() : '';
    own.connection = (this.seen & seenConnection) !== 0 ? '' : this.closeAfter ? 'Connection: close\r\n' : keepAliveLines(this.line.keepAliveSeconds);
    const framed = (this.seen & (seenLength | seenEncoding)) !== 0 || this.noBody;
    own.length = !framed && bodyLength >= 0 ? String(bodyLength) : '';
    own.chunked = !framed && bodyLength < 0;
    return own;
  }

  /** One header's lines, checked as node:http checks them; notes the headers that change framing. */
  private field(name: string, value: OutgoingHttpHeader): string {
    this.check(name, value);
    if (!Array.isArray(value)) return `${name}: ${typeof value === 'string' ? value : String(value)}\r\n`;
    let lines = '';
    for (const v of value) lines += `${name}: ${v}\r\n`;
    return lines;
  }

  /** Throws on a name or value node:http refuses; notes the headers that change framing (seen*, closeAfter). */
  private check(name: string, value: OutgoingHttpHeader): void {
    if (!validName(name)) {
      const err = new TypeError(`Header name must be a valid HTTP token ["${name}"]`) as TypeError & { code: string };
      err.code = 'ERR_INVALID_HTTP_TOKEN';
      throw err;
    }
    if (Array.isArray(value)) {
      for (const v of value) this.check(name, v);
      return;
    }
    const text = typeof value === 'string' ? value : String(value);
    if (badValue.test(text)) invalidHeader(name);
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'date') this.seen |= seenDate;
        break;
      case 10:
        if (name.toLowerCase() === 'connection') {
          this.seen |= seenConnection;
          if (/(^|,)\s*close\s*(,|$)/i.test(text)) this.closeAfter = true;
        }
        break;
      case 14:
        if (name.toLowerCase() === 'content-length') this.seen |= seenLength;
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') this.seen |= seenEncoding;
        break;
    }
  }

  /**
   * A whole response after writeHead(status, flat list): its head and body written straight into
   * one buffer and handed to the socket in one write. Building the head as text made a string per
   * line and one per join, then a flat copy of head and body at the write (~2 KB a reply).
   * False (nothing done) when the list holds anything but strings or the caller framed the body.
   */
  private sendWhole(flat: OutgoingHttpHeader[], data: string): boolean {
    if ((this.seen & seenEncoding) !== 0) return false;
    const first = statusLine(this.statusCode, this.statusMessage);
    const id = this.req.svcRequestId;
    let size = first.length + 2 + idHeaders[0].length + idHeaders[1].length + 2 * id.length + 8;
    for (let i = 0; i < flat.length; i++) {
      const v = flat[i];
      if (typeof v !== 'string') return false;
      size += v.length + 2;
    }
    this.deferred = undefined;
    const bodyBytes = Buffer.byteLength(data);
    const { date, connection, length } = this.ownLines(bodyBytes);
    const bodySize = this.noBody ? 0 : bodyBytes;
    if (date) size += 8 + date.length;
    if (length) size += 18 + length.length;
    size += connection.length + bodySize;
    const buf = Buffer.allocUnsafe(size);
    let at = buf.write(first, 0, 'latin1');
    for (let i = 0; i < flat.length; i += 2) {
      at += buf.write(flat[i] as string, at, 'latin1');
      buf[at++] = 58;
      buf[at++] = 32;
      at += buf.write(flat[i + 1] as string, at, 'latin1');
      at = crlf(buf, at);
    }
    for (let i = 0; i < idHeaders.length; i++) {
      at += buf.write(idHeaders[i]!, at, 'latin1');
      buf[at++] = 58;
      buf[at++] = 32;
      at += buf.write(id, at, 'latin1');
      at = crlf(buf, at);
    }
    if (date) {
      at += buf.write('Date: ', at, 'latin1');
      at += buf.write(date, at, 'latin1');
      at = crlf(buf, at);
    }
    at += buf.write(connection, at, 'latin1');
    if (length) {
      at += buf.write('Content-Length: ', at, 'latin1');
      at += buf.write(length, at, 'latin1');
      at = crlf(buf, at);
    }
    at = crlf(buf, at);
    if (bodySize > 0) buf.write(data, at, 'utf8');
    this.writableEnded = true;
    if (!this.destroyed && !this.line.socket.write(buf, this.onFlushed)) this.writableNeedDrain = true;
    return true;
  }

  flushHeaders(): void {
    if (!this.headersSent) this.makeHead(undefined, -1);
    else this.madeHead(-1);
    if (this.pendingHead) this.send('', false);
  }

  writeContinue(): void {
    if (!this.destroyed) this.line.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), cb?: (err?: Error | null) => void): boolean {
    if (this.writableEnded) {
      const err = new Error('write after end') as Error & { code: string };
      err.code = 'ERR_STREAM_WRITE_AFTER_END';
      throw err;
    }
    if (!this.headersSent) this.makeHead(undefined, -1);
    else this.madeHead(-1);
    return this.send(chunk, false, typeof encoding === 'function' ? encoding : cb);
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    if (this.writableEnded) return this;
    const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
    if (done) this.once('finish', done);
    const data = typeof chunk === 'function' || chunk === undefined ? '' : chunk;
    const flat = this.deferred;
    if (flat && typeof data === 'string' && this.sendWhole(flat, data)) return this;
    if (!this.headersSent) this.makeHead(undefined, typeof data === 'string' ? Buffer.byteLength(data) : data.length);
    else this.madeHead(typeof data === 'string' ? Buffer.byteLength(data) : data.length);
    this.writableEnded = true;
    this.send(data, true);
    return this;
  }

  /** Writes body bytes (framed when chunked) after the head still pending; the last write finishes. */
  private send(data: string | Uint8Array, last: boolean, written?: (err?: Error | null) => void): boolean {
    if (this.destroyed) return false;
    const socket = this.line.socket;
    const size = this.noBody ? 0 : typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    let ok = true;
    const head = this.pendingHead;
    this.pendingHead = '';
    if (typeof data === 'string' && !nonAscii.test(head)) {
      let text = head;
      if (size > 0) text += this.chunked ? `${size.toString(16)}\r\n${data}\r\n` : data;
      if (last && this.chunked) text += '0\r\n\r\n';
      if (text) ok = socket.write(text, last ? this.onFlushed : written);
      else if (last) this.onFlushed();
      else written?.();
    } else {
      const parts: Buffer[] = [];
      if (head) parts.push(Buffer.from(head, 'latin1'));
      if (size > 0) {
        if (this.chunked) parts.push(Buffer.from(`${size.toString(16)}\r\n`, 'latin1'));
        parts.push(typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
        if (this.chunked) parts.push(Buffer.from('\r\n', 'latin1'));
      }
      if (last && this.chunked) parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
      const bytes = Buffer.concat(parts);
      if (bytes.length > 0) ok = socket.write(bytes, last ? this.onFlushed : written);
      else if (last) this.onFlushed();
      else written?.();
    }
    if (!ok) this.writableNeedDrain = true;
    return ok;
  }

  /** The last write left: `finish`, then `close` on the next tick, as node's response. */
  private readonly onFlushed = (err?: Error | null): void => {
    if (err || this.destroyed || this.writableFinished) return;
    this.writableFinished = true;
    this.emit('finish');
    this.line.responded(this.closeAfter);
    process.nextTick(closeLater, this);
  };

  /** The socket drained. */
  drained(): void {
    this.writableNeedDrain = false;
    this.emit('drain');
  }

  /** The response is over, finished or cut: `close`, once. */
  closed(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }

  destroy(): this {
    this.line.socket.destroy();
    return this;
  }
}
