import { GatewayError, parseJson, type ChatRequest, type RequestNeeds } from '../../kernel/index.js';
import { validateChatRequest, type ValidationLimits } from './validate.js';

/**
 * JSON nesting a request body may reach anywhere, unknown fields included. JSON.parse builds
 * each level (10 M levels took 7.8 s) before validation could ignore the field; no request a
 * client sends nests a tenth as deep (tool schemas are held to 64 levels inside it).
 */
export const maxBodyDepth = 256;

/**
 * True when the JSON text nests objects or arrays deeper than `max`: one pass over the bytes,
 * skipping strings (where brackets are text).
 */
export function nestsDeeperThan(body: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * A model request's body to its validated request: nesting checked, parsed, validated. Linear in
 * the body's size; the parser runs it in a worker for large bodies (body-parser.ts).
 */
export function checkChatBody(body: Uint8Array, limits: ValidationLimits): { chat: ChatRequest; needs: RequestNeeds } {
  if (nestsDeeperThan(body, maxBodyDepth)) throw new GatewayError('invalid_request', `The request body nests JSON more than ${maxBodyDepth} levels deep.`, { param: 'body' });
  return validateChatRequest(parseJson(Buffer.from(body.buffer, body.byteOffset, body.byteLength)), limits);
}
