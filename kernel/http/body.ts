import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';

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

/**
 * Reads request bodies within the service's limits: one body's size, the total held by all
 * requests in flight (a body's bytes count from its first byte until its response closes, since
 * the parsed request lives that long), and a floor rate below which a trickling body is cut.
 */
export class BodyReader {
  private held = 0;

  constructor(private readonly limits: BodyLimits) {}

  /** Bytes of bodies currently counted against `inFlightBytes` (for tests and diagnostics). */
  get heldBytes(): number {
    return this.held;
  }

  /** Counts `n` more bytes for one request; false when that would pass the total. */
  private take(n: number): boolean {
    if (this.held + n > this.limits.inFlightBytes) return false;
    this.held += n;
    return true;
  }

  /**
   * Reads a body up to the limit (or `smaller`, for routes that take small bodies). Refuses at once on a larger Content-Length (or one that does not
   * fit the total) and stops reading as soon as the running total passes a limit.
   */
  read(req: IncomingMessage, res: ServerResponse, smaller?: number): Promise<Buffer> {
    const { minBytesPerSecond, rateWindowMs } = this.limits;
    const maxBytes = Math.min(smaller ?? Infinity, this.limits.maxBytes);
    const declared = Number(req.headers['content-length']);
    const known = Number.isFinite(declared) && declared >= 0;
    if (known && declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
    let mine = 0;
    const count = (n: number): boolean => {
      if (!this.take(n)) return false;
      mine += n;
      return true;
    };
    if (known && !count(declared)) return Promise.reject(noRoom());
    // A client that asked to wait (Expect: 100-continue, as curl does for large bodies) sends the
    // body only now, once the key and the limits allowed it; a refusal before this costs it nothing.
    if (/^100-continue$/i.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();
    res.once('close', () => {
      this.held -= mine;
      mine = 0;
    });
    // Plain listeners, not `for await`: leaving that loop early destroys the socket, so a chunked
    // body over the limit got a reset instead of the 413. Pausing keeps the socket for the reply.
    return new Promise((done, fail) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let sinceCheck = 0;
      const floor = (minBytesPerSecond * rateWindowMs) / 1000;
      const rate = minBytesPerSecond > 0 ? setInterval(() => {
        if (sinceCheck < floor) stop(tooSlow(minBytesPerSecond));
        sinceCheck = 0;
      }, rateWindowMs) : undefined;
      const off = (): void => {
        clearInterval(rate);
        req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      };
      const stop = (err: Error): void => {
        off();
        req.pause();
        fail(err);
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        sinceCheck += chunk.length;
        if (size > maxBytes) return stop(tooLarge(maxBytes));
        if (!known && !count(chunk.length)) return stop(noRoom());
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        off();
        done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      };
      const onError = (err: Error): void => {
        off();
        fail(err);
      };
      const onClose = (): void => onError(new Error('the client closed the connection before the body ended'));
      req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
    });
  }
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
