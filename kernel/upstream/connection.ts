import dc from 'node:diagnostics_channel';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { CallSignal } from './http.js';
import { ResponseParser, type ResponseHead, type ResponseSink } from './response-parser.js';
import { withItem } from '../lists.js';

/**
 * One keep-alive connection to a provider: a socket, its response parser, and the call it is
 * serving (one at a time, no pipelining). Its listeners are made once per connection, not per
 * call: a call costs the request's head string, a body stream and the promise the caller awaits.
 */

/**
 * Published (nothing, when nobody listens) as a call's request is handed to the socket and as its
 * response head is read: what node:http's client publishes as `http.client.request.start` and
 * `http.client.response.finish`, for tools that time requests (bench/timeline-probe.ts).
 */
export const upstreamChannels = {
  requestSent: dc.channel('svc.upstream.request.sent'),
  responseHead: dc.channel('svc.upstream.response.head'),
};

/** A call as the pool hands it to a connection. */
export interface Call {
  head: string;
  body: string | Buffer | Readable | undefined;
  /** A stream body without a known length is sent with chunked transfer coding. */
  chunked: boolean;
  signal: CallSignal | undefined;
  resolve(res: { statusCode: number; headers: IncomingHttpHeaders; body: UpstreamBody }): void;
  reject(err: unknown): void;
}

/** What the connection tells its pool. */
export interface ConnectionOwner {
  /** The call ended (`reusable`: the connection may serve another one). */
  finished(conn: Connection, reusable: boolean): void;
  /** The socket closed. */
  gone(conn: Connection): void;
}

const abortOnce = { once: true } as const;

/** The error a call ends with when its signal aborts, shaped as undici's and fetch's. */
export function abortError(signal: CallSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** The error a call ends with when its pool was closed under it. */
export function poolClosedError(): Error {
  return Object.assign(new Error('upstream pool closed'), { code: 'UPSTREAM_CLOSED' });
}

/** How an UpstreamBody is being read: not yet chosen, as a stream, or collected whole by `text`. */
const Mode = { Open: 0, Stream: 1, Text: 2 } as const;
type Mode = (typeof Mode)[keyof typeof Mode];

interface Collector {
  parts: Buffer[];
  size: number;
  limit: number;
  done(text: string): void;
  fail(err: Error): void;
}

/** Bytes a body holds for a reader that has not taken them before the socket is paused (a Readable's default). */
const highWaterMark = 64 * 1024;

/** No bytes: one shared (frozen) list that the first bytes replace (withItem: a reply comes in one read or two). */
const noBytes: Buffer[] = Object.freeze([]) as unknown as Buffer[];

const textOf = (parts: Buffer[]): string => (parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts).toString('utf8'));
const prematureClose = (): Error => Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
const finished: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * A response body: the reply's bytes, read either whole by `text()` or as a stream of buffers
 * (`for await`); destroying it before its end drops the connection. Its bytes wait here until a
 * reader chooses. Not a node Readable: a Readable's state, buffer and events, made for every
 * reply, cost ~0.5 KB a whole reply that never used them (a whole reply is read by `text`). The
 * stream keeps a Readable's rules: the socket pauses while more than `highWaterMark` bytes wait,
 * an error ends the iteration with that error, a body destroyed before its end with
 * ERR_STREAM_PREMATURE_CLOSE, and a loop that stops early destroys the body.
 */
export class UpstreamBody implements AsyncIterable<Buffer> {
  private mode: Mode = Mode.Open;
  /** Bytes that arrived before a reader took them, and how many. */
  private waiting: Buffer[] = noBytes;
  private waitingSize = 0;
  /** The end came (the stream reader gets what waits, then the end). */
  private complete = false;
  private failure: Error | undefined;
  private collector: Collector | undefined;
  /** A stream reader waiting for the next bytes. */
  private reader: { resolve(r: IteratorResult<Buffer>): void; reject(err: Error): void } | undefined;
  destroyed = false;

  constructor(private readonly conn: Connection) {}

  /**
   * The whole body's text, at most `limit` bytes (the rest is dropped and the body destroyed);
   * undefined when a stream reader has begun (readUpstreamText then reads it as a stream).
   */
  text(limit: number): Promise<string> | undefined {
    if (this.mode !== Mode.Open || this.destroyed) return undefined;
    this.mode = Mode.Text;
    return new Promise((done, fail) => {
      this.collector = { parts: noBytes, size: 0, limit, done, fail };
      const waiting = this.waiting;
      this.waiting = noBytes;
      this.waitingSize = 0;
      for (let i = 0; i < waiting.length && this.collector; i++) this.collect(waiting[i]!);
      if (!this.collector) return;
      if (this.complete) this.finishText();
      // A socket paused while the bytes waited for a reader reads on.
      else this.conn.resume(this);
    });
  }

  /** The connection's bytes; false asks it to pause the socket until a reader wants more. */
  deliver(bytes: Buffer): boolean {
    if (this.mode === Mode.Text) {
      if (this.collector) this.collect(bytes);
      return true;
    }
    const reader = this.reader;
    if (reader !== undefined) {
      this.reader = undefined;
      reader.resolve({ done: false, value: bytes });
      return true;
    }
    this.waiting = withItem(this.waiting, bytes);
    this.waitingSize += bytes.length;
    return this.waitingSize < highWaterMark;
  }

  /** The reply's end. */
  ended(): void {
    this.complete = true;
    if (this.mode === Mode.Text) this.finishText();
    const reader = this.reader;
    if (reader !== undefined) {
      this.reader = undefined;
      reader.resolve(finished);
    }
  }

  /** Stops reading: the connection is dropped unless the reply had ended; `err` is what a reader then gets. */
  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.conn.dropped(this);
    const failure = err ?? prematureClose();
    const c = this.collector;
    if (c !== undefined) {
      // Collected by `text`: its promise carries the failure.
      this.collector = undefined;
      c.fail(failure);
    }
    if (this.complete && err === undefined) return this;
    this.failure = failure;
    const reader = this.reader;
    if (reader !== undefined) {
      this.reader = undefined;
      reader.reject(failure);
    }
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    if (this.mode === Mode.Open) this.mode = Mode.Stream;
    return { next: () => this.next(), return: () => this.stop() };
  }

  private next(): Promise<IteratorResult<Buffer>> {
    if (this.waiting.length > 0) {
      const value = this.waiting.shift()!;
      this.waitingSize -= value.length;
      // Below the mark again: a socket paused for this body reads on.
      if (!this.complete && this.waitingSize < highWaterMark) this.conn.resume(this);
      return Promise.resolve({ done: false, value });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.complete) return Promise.resolve(finished);
    this.conn.resume(this);
    return new Promise((resolve, reject) => {
      this.reader = { resolve, reject };
    });
  }

  /** The loop stopped (break, return, a throw): as a Readable's iterator, the body is destroyed. */
  private stop(): Promise<IteratorResult<Buffer>> {
    if (!this.complete || this.waiting.length > 0) this.destroy();
    return Promise.resolve(finished);
  }

  private collect(bytes: Buffer): void {
    const c = this.collector!;
    if (c.size + bytes.length > c.limit) {
      this.collector = undefined;
      c.done(textOf(c.parts));
      this.destroy();
      return;
    }
    c.size += bytes.length;
    c.parts = withItem(c.parts, bytes);
  }

  private finishText(): void {
    const c = this.collector;
    if (!c) return;
    this.collector = undefined;
    c.done(textOf(c.parts));
  }
}

/** An UpstreamResponse whose headers are made when first read (response-parser.ts ResponseHead). */
class Answer {
  constructor(
    readonly statusCode: number,
    private readonly head: ResponseHead,
    readonly body: UpstreamBody,
  ) {}

  get headers(): IncomingHttpHeaders {
    return this.head.headers;
  }
}

export class Connection implements ResponseSink {
  private readonly parser = new ResponseParser(this);
  private call: Call | undefined;
  private body: UpstreamBody | undefined;
  /** The request's bytes were all written (a reply that comes early leaves the connection unusable). */
  private sent = false;
  private keepAlive = false;
  private ended = false;
  /** When the connection last finished a call (the pool closes the ones idle too long). */
  lastUsed = 0;
  /** How long the server said it keeps an idle connection (`Keep-Alive: timeout=N`), in ms; Infinity when it did not say. */
  serverIdleMs = Infinity;
  private hintRead: string | undefined;

  constructor(readonly socket: Socket, private readonly owner: ConnectionOwner) {
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
  }

  /** Sends a call's request; the answer resolves `call`. */
  start(call: Call): void {
    this.call = call;
    this.body = undefined;
    this.ended = false;
    this.sent = false;
    this.parser.expect();
    // A reply's last read may have paused the socket for its reader; this reply is read afresh.
    this.socket.resume();
    call.signal?.addEventListener('abort', this.onAbort, abortOnce);
    if (upstreamChannels.requestSent.hasSubscribers) upstreamChannels.requestSent.publish(undefined);
    const body = call.body;
    if (body === undefined) {
      this.socket.write(call.head);
      this.sent = true;
    } else if (typeof body === 'string') {
      this.socket.write(call.head + body);
      this.sent = true;
    } else if (Buffer.isBuffer(body)) {
      // The pool writes a string body and its head into one buffer (pool.ts wire): one write.
      if (call.head === '') this.socket.write(body);
      else {
        this.socket.cork();
        this.socket.write(call.head);
        this.socket.write(body);
        this.socket.uncork();
      }
      this.sent = true;
    } else this.stream(call, body);
  }

  /** A stream body, with backpressure; chunk-framed when its length is unknown. */
  private stream(call: Call, body: Readable): void {
    const socket = this.socket;
    socket.write(call.head);
    const onDrain = (): void => void body.resume();
    const stop = (): void => {
      body.off('data', onData).off('end', onEnd).off('error', onFail);
      socket.off('drain', onDrain);
    };
    const onData = (chunk: Buffer | string): void => {
      const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (size === 0) return;
      if (call.chunked) socket.write(`${size.toString(16)}\r\n`);
      const more = socket.write(chunk);
      if (call.chunked) socket.write('\r\n');
      if (!more) body.pause();
    };
    const onEnd = (): void => {
      stop();
      if (call.chunked) socket.write('0\r\n\r\n');
      if (this.call === call) this.sent = true;
    };
    const onFail = (err: Error): void => {
      stop();
      if (this.call === call) this.fail(err);
    };
    socket.on('drain', onDrain);
    body.on('data', onData).on('end', onEnd).on('error', onFail);
  }

  /** The body's reader wants more: the socket was paused for it. */
  resume(body: UpstreamBody): void {
    if (body === this.body) this.socket.resume();
  }

  /** The body was destroyed by its reader before the reply ended: the connection cannot be reused. */
  dropped(body: UpstreamBody): void {
    if (body !== this.body || this.ended) return;
    this.finish(false);
    this.socket.destroy();
  }

  head(statusCode: number, head: ResponseHead, keepAlive: boolean): void {
    this.keepAlive = keepAlive;
    const hint = head.keepAliveHint;
    // The same server sends the same hint on every reply: read once per connection.
    if (hint !== undefined && hint !== this.hintRead) {
      this.hintRead = hint;
      // Given up a second before the server's close, as node:http's Agent does: a call sent as it closes would fail.
      const seconds = /timeout=(\d+)/i.exec(hint)?.[1];
      if (seconds !== undefined) this.serverIdleMs = Number(seconds) * 1000 - 1000;
    }
    this.body = new UpstreamBody(this);
    if (upstreamChannels.responseHead.hasSubscribers) upstreamChannels.responseHead.publish(undefined);
    this.call!.resolve(new Answer(statusCode, head, this.body));
  }

  data(bytes: Buffer): void {
    if (!this.body!.deliver(bytes)) this.socket.pause();
  }

  end(): void {
    this.ended = true;
    this.body!.ended();
  }

  private readonly onData = (buf: Buffer): void => {
    if (!this.call) {
      // Bytes nobody asked for on an idle connection: it is out of step, drop it.
      this.socket.destroy();
      return;
    }
    try {
      this.parser.feed(buf);
    } catch (err) {
      if (this.call && !this.ended) this.fail(err as Error);
      this.socket.destroy();
      return;
    }
    // Handed back after the read, so bytes past the reply's end are refused above, not read as the next reply.
    if (this.ended && this.call) {
      const reusable = this.keepAlive && this.sent;
      this.finish(reusable);
      // Not to be reused (Connection: close, or a reply that came before the request was all sent):
      // closed now rather than left holding one of the pool's places until the server closes it.
      if (!reusable) this.socket.destroy();
    }
  };

  private readonly onError = (err: Error): void => {
    if (this.call) this.fail(err);
  };

  private readonly onClose = (): void => {
    if (this.call) {
      // No length given: the close ends the body. Otherwise the reply broke off.
      if (this.parser.closed()) this.finish(false);
      else if (this.parser.inBody) this.fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      else this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    }
    this.owner.gone(this);
  };

  private readonly onAbort = (): void => {
    const signal = this.call?.signal;
    if (!signal) return;
    this.fail(abortError(signal));
  };

  /** Ends the call with an error: before the head the request rejects, after it the body fails. */
  private fail(err: Error): void {
    const call = this.call;
    const body = this.body;
    if (!call) return;
    this.finish(false);
    this.socket.destroy();
    if (body) {
      if (!this.ended) body.destroy(err);
    } else call.reject(err);
  }

  private finish(reusable: boolean): void {
    const call = this.call;
    if (!call) return;
    call.signal?.removeEventListener('abort', this.onAbort);
    this.call = undefined;
    this.owner.finished(this, reusable);
  }
}
