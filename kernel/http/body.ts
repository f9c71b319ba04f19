import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';
import { Roster } from '../pipeline/roster.js';

const MB = 1024 * 1024;

function tooLarge(limit: number): GatewayError {
  // A limit that is not whole megabytes would otherwise read "larger than 0 MB".
  const size = limit % MB === 0 ? `${limit / MB} MB` : `${limit} bytes`;
  return new GatewayError('request_too_large', `The request body is larger than ${size}.`);
}

/** The service is holding its configured total of body bytes: temporary, so the client may retry. */
function noRoom(): GatewayError {
  return new GatewayError('request_too_large', 'The service is reading too many large request bodies at once; retry shortly.', {
    details: { reason: 'body_capacity' },
    headers: { 'retry-after': '1', 'x-should-retry': 'true' },
  });
}

function tooSlow(floor: number): GatewayError {
  return new GatewayError('invalid_request', `The request body arrived slower than ${floor} bytes per second and was cut.`, {
    details: { reason: 'body_too_slow' },
    headers: { connection: 'close' },
  });
}

/** How bodies are read: see the server.* fields in kernel/config/schema.ts. */
export interface BodyLimits {
  /** One body's limit (SPEC.md Limits: 32 MB). */
  maxBytes: number;
  /** All bodies held by requests in flight together. */
  inFlightBytes: number;
  /** Floor rate; 0 turns the check off. */
  minBytesPerSecond: number;
  /** The window the floor rate is averaged over. */
  rateWindowMs: number;
}

/** The body being read for a request, found through it by the shared listeners below. */
const kRead = Symbol('svc.bodyRead');
type Reading = IncomingMessage & { [kRead]?: BodyRead };

// Listeners shared by every body read, called with the request as `this`: closures and `once`
// wrappers made for each read were ~2 KB of garbage a request (bench/README.md "Eighteenth look").
function onData(this: Reading, chunk: Buffer): void {
  this[kRead]!.data(chunk);
}
function onEnd(this: Reading): void {
  this[kRead]!.end();
}
function onError(this: Reading, err: Error): void {
  this[kRead]!.fail(err);
}
function onClose(this: Reading): void {
  this[kRead]!.fail(new Error('the client closed the connection before the body ended'));
}
/** On the response: its request's body bytes stop counting once the response closed. */
function releaseHeld(this: ServerResponse): void {
  (this.req as Reading)[kRead]?.release();
}

/** One request's body: what arrived, what it holds of the total, how it ends. */
class BodyRead {
  readonly chunks: Buffer[] = [];
  size = 0;
  /** Bytes of the total this request holds (until its response closes). */
  mine = 0;
  /** Bytes since the rate was last checked, and when that was (performance.now()). */
  sinceCheck = 0;
  checkedAt = performance.now();
  /** Its place among the reads the rate check watches (-1: not watched). */
  slot = -1;
  resolve: (body: Buffer) => void = noop;
  reject: (err: Error) => void = noop;

  constructor(
    private readonly reader: BodyReader,
    readonly req: IncomingMessage,
    private readonly maxBytes: number,
    private readonly known: boolean,
  ) {}

  take(n: number): boolean {
    if (!this.reader.take(n)) return false;
    this.mine += n;
    return true;
  }

  release(): void {
    this.reader.give(this.mine);
    this.mine = 0;
  }

  data(chunk: Buffer): void {
    this.size += chunk.length;
    this.sinceCheck += chunk.length;
    if (this.size > this.maxBytes) return this.stop(tooLarge(this.maxBytes));
    if (!this.known && !this.take(chunk.length)) return this.stop(noRoom());
    this.chunks.push(chunk);
  }

  end(): void {
    this.off();
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks.length = 0;
    this.resolve(body);
  }

  fail(err: Error): void {
    this.off();
    this.reject(err);
  }

  /** Refuses the body; the socket is kept (paused) for the reply. */
  stop(err: Error): void {
    this.off();
    this.req.pause();
    this.reject(err);
  }

  private off(): void {
    this.reader.unwatch(this);
    this.req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
  }
}

const noop = (): void => {};

/**
 * Reads request bodies within the service's limits: one body's size, the total held by all
 * requests in flight (a body's bytes count from its first byte until its response closes, since
 * the parsed request lives that long), and a floor rate below which a trickling body is cut.
 */
export class BodyReader {
  private held = 0;
  /** Bodies still arriving, for the rate check: one timer for all of them, not one each. */
  private readonly arriving = new Roster<BodyRead>();
  private rateTimer: NodeJS.Timeout | undefined;

  constructor(private readonly limits: BodyLimits) {}

  /** Bytes of bodies currently counted against `inFlightBytes` (for tests and diagnostics). */
  get heldBytes(): number {
    return this.held;
  }

  /** Counts `n` more bytes for one request; false when that would pass the total (BodyRead's). */
  take(n: number): boolean {
    if (this.held + n > this.limits.inFlightBytes) return false;
    this.held += n;
    return true;
  }

  /** Gives back what a request held (BodyRead's). */
  give(n: number): void {
    this.held -= n;
  }

  /**
   * Reads a body up to the limit (or `smaller`, for routes that take small bodies). Refuses at once on a larger Content-Length (or one that does not
   * fit the total) and stops reading as soon as the running total passes a limit.
   */
  read(req: IncomingMessage, res: ServerResponse, smaller?: number): Promise<Buffer> {
    const maxBytes = Math.min(smaller ?? Infinity, this.limits.maxBytes);
    const declared = Number(req.headers['content-length']);
    const known = Number.isFinite(declared) && declared >= 0;
    if (known && declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
    const r = new BodyRead(this, req, maxBytes, known);
    const earlier = (req as Reading)[kRead];
    (req as Reading)[kRead] = r;
    // A second read of the same request keeps counting what the first held, released once.
    if (earlier) {
      r.mine = earlier.mine;
      earlier.mine = 0;
    } else res.on('close', releaseHeld);
    if (known && !r.take(declared)) return Promise.reject(noRoom());
    // The whole body is already here (a route that read it after waiting for something else):
    // taken in one read. A route that reads at once finds the body still to come, even when it
    // came in the head's packet: node runs the route's first microtasks before it parses on.
    if (req.complete && req.readableFlowing !== true) {
      const size = req.readableLength;
      if (size > maxBytes) return Promise.reject(tooLarge(maxBytes));
      if (!known && !r.take(size)) return Promise.reject(noRoom());
      return Promise.resolve(size === 0 ? Buffer.alloc(0) : (req.read() as Buffer));
    }
    // A client that asked to wait (Expect: 100-continue, as curl does for large bodies) sends the
    // body only now, once the key and the limits allowed it; a refusal before this costs it nothing.
    if (/^100-continue$/i.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();
    // Plain listeners, not `for await`: leaving that loop early destroys the socket, so a chunked
    // body over the limit got a reset instead of the 413. Pausing keeps the socket for the reply.
    const promise = new Promise<Buffer>((resolve, reject) => {
      r.resolve = resolve;
      r.reject = reject;
    });
    this.watch(r);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    return promise;
  }

  /** Watches a read's rate while it arrives (nothing to do when the floor is off). */
  private watch(r: BodyRead): void {
    if (this.limits.minBytesPerSecond <= 0) return;
    r.slot = this.arriving.add(r);
    // A quarter window apart: each read is checked a window (up to a quarter more) after the last.
    this.rateTimer ??= setInterval(this.checkRates, Math.max(25, this.limits.rateWindowMs / 4)).unref();
  }

  /**
   * A read that ended leaves the rate check. The timer stays until a tick finds no read left:
   * stopping it with the last read started and stopped one for every request at one connection.
   */
  unwatch(r: BodyRead): void {
    if (r.slot === -1) return;
    this.arriving.remove(r.slot, r);
    r.slot = -1;
  }

  /** Cuts each read that got less than the floor rate over the window since its last check. */
  private readonly checkRates = (): void => {
    if (this.arriving.size === 0) {
      clearInterval(this.rateTimer);
      this.rateTimer = undefined;
      return;
    }
    const { minBytesPerSecond, rateWindowMs } = this.limits;
    const now = performance.now();
    for (const r of this.arriving.values()) {
      const elapsed = now - r.checkedAt;
      if (elapsed < rateWindowMs) continue;
      if (r.sinceCheck < (minBytesPerSecond * elapsed) / 1000) r.stop(tooSlow(minBytesPerSecond));
      else {
        r.sinceCheck = 0;
        r.checkedAt = now;
      }
    }
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a body as JSON; bad UTF-8 or bad JSON is 400 invalid_request. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new GatewayError('invalid_request', 'The request body is empty; a JSON object is expected.');
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
}
