import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { PlainHead } from './head.js';

/**
 * A request the front reads itself (connection.ts), with the part of node's IncomingMessage the
 * routes it serves use: method, url, headers, socket, and the body as `complete` + `read()` when
 * it is all here (the usual case: head and body in one packet), or as `data` / `end` events
 * while it arrives. `pause` and `resume` pause and resume the socket, as node's would.
 */
export class DirectRequest extends EventEmitter {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The request id (request-id.ts), set by the front before any route runs. */
  svcRequestId = '';
  /** The whole body arrived. */
  complete: boolean;
  /** Null until a reader asks for events, true while they flow, false while paused. */
  readableFlowing: boolean | null = null;
  /** Body bytes not yet handed to a reader. */
  private parts: Buffer[] = [];
  private held = 0;
  /** Body bytes still to come from the socket. */
  remaining: number;
  private flushing = false;
  private ended = false;

  constructor(
    head: PlainHead,
    readonly socket: Socket,
  ) {
    super();
    this.method = head.method;
    this.url = head.url;
    this.headers = head.headers;
    this.remaining = head.contentLength;
    this.complete = head.contentLength === 0;
  }

  get readableLength(): number {
    return this.held;
  }

  /** Body bytes from the connection; the last ones complete the request. */
  take(chunk: Buffer): void {
    this.remaining -= chunk.length;
    if (this.remaining === 0) this.complete = true;
    if (this.readableFlowing === true && !this.flushing) {
      if (this.listenerCount('data') > 0) this.emit('data', chunk);
      if (this.complete) this.end();
      return;
    }
    this.parts.push(chunk);
    this.held += chunk.length;
  }

  /** The body held so far, at once (node's `read()` on a request whose body is all here). */
  read(): Buffer | null {
    if (this.held === 0) return null;
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    if (this.complete) queueMicrotask(() => this.end());
    return body;
  }

  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'data' && this.readableFlowing === null) this.resume();
    return this;
  }

  pause(): this {
    if (this.readableFlowing !== false) {
      this.readableFlowing = false;
      this.socket.pause();
    }
    return this;
  }

  /**
   * Flows the body: what was held first (on the next tick, once the reader's listeners are all
   * on, as a stream does), then the rest as it arrives; with no `data` listener it is dropped.
   */
  resume(): this {
    if (this.readableFlowing === true) return this;
    const wasPaused = this.readableFlowing === false;
    this.readableFlowing = true;
    this.flushing = true;
    process.nextTick(() => {
      this.flushing = false;
      const parts = this.parts;
      this.parts = [];
      this.held = 0;
      for (const p of parts) if (this.listenerCount('data') > 0) this.emit('data', p);
      if (this.complete) this.end();
      if (wasPaused && this.readableFlowing) this.socket.resume();
    });
    return this;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('end');
  }

  /** The socket closed before the body ended: readers hear `close`, as from node's request. */
  closed(): void {
    this.emit('close');
  }

  destroy(): this {
    this.socket.destroy();
    return this;
  }
}
