import type { GatewayError } from '../../kernel/index.js';
import { fromVendorError, modelNotFound, parseVendorError, type ErrorContext } from '../openai-compatible/errors.js';

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A model id Mistral does not know: 400 `{"object":"error","message":"Invalid model: <id>","type":
 * "invalid_model","code":"1500"}` (fixture mistral-invalid-model).
 */
function unknownModel(status: number, body: unknown): boolean {
  const e = parseVendorError(body);
  return status === 400 && (e.type === 'invalid_model' || /^invalid model\b/i.test(e.message));
}

/**
 * Mistral's validation errors put pydantic's list in `message.detail` (an object, not text),
 * sometimes as a JSON string (fixtures mistral-extra-forbidden*). They become one readable
 * message naming the fields, with `param` the first field's path; the rest follows the shared table.
 */
export function mistralError(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError {
  if (unknownModel(status, body)) return modelNotFound(ctx);
  let json: unknown = body;
  if (typeof body === 'string') {
    try {
      json = JSON.parse(body);
    } catch {
      return fromVendorError(status, headers, body, ctx);
    }
  }
  if (!isObject(json)) return fromVendorError(status, headers, body, ctx);
  let detail: unknown = isObject(json.message) ? json.message.detail : json.detail;
  if (typeof json.message === 'string' && json.message.startsWith('{')) {
    try {
      detail = (JSON.parse(json.message) as Json).detail;
    } catch {
      // plain text that happens to start with a brace
    }
  }
  if (!Array.isArray(detail)) return fromVendorError(status, headers, json, ctx);
  const items = detail.filter(isObject);
  const path = (d: Json) => (Array.isArray(d.loc) ? d.loc.filter((p) => p !== 'body').join('.') : '');
  const message = items.map((d) => `${path(d)}: ${String(d.msg ?? d.type ?? 'invalid')}`).join('; ');
  const param = items[0] ? path(items[0]) : undefined;
  return fromVendorError(status, headers, { error: { message, type: String(json.type ?? 'invalid_request_error'), ...(param ? { param } : {}) } }, ctx);
}
