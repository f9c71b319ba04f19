import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';

const MB = 1024 * 1024;

function tooLarge(limit: number): GatewayError {
  // A limit that is not whole megabytes would otherwise read "larger than 0 MB".
  const size = limit % MB === 0 ? `${limit / MB} MB` : `${limit} bytes`;
  return new GatewayError('request_too_large', `The request body is larger than ${size}.`);
}

/**
 * Reads a request body up to `limit` bytes. Refuses at once on a larger Content-Length and stops
 * reading as soon as the running total passes the limit, so no more than the limit is buffered.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // Plain listeners, not `for await`: leaving that loop early destroys the socket, so a chunked
  // body over the limit got a reset instead of the 413. Pausing keeps the socket for the reply.
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const off = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      off();
      req.pause();
      fail(tooLarge(limit));
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
