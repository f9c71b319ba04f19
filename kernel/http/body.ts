import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error.js';

function tooLarge(limit: number): GatewayError {
  return new GatewayError('request_too_large', `The request body is larger than ${Math.floor(limit / (1024 * 1024))} MB.`);
}

/**
 * Reads a request body up to `limit` bytes. Refuses at once on a larger Content-Length and stops
 * reading as soon as the running total passes the limit, so no more than the limit is buffered.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** Parses a body as JSON; bad UTF-8 or bad JSON is 400 invalid_request. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new GatewayError('invalid_request', 'The request body is empty; a JSON object is expected.');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
}
