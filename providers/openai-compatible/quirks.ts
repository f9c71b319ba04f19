import type { ChatCompletion, GatewayError, UpstreamCall } from '../../kernel/index.js';
import type { ErrorContext } from './errors.js';
import { readStreamEvent, toChunk, type StreamItem } from './transform.js';

type Json = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;

/**
 * Hook points for a vendor that speaks the Chat Completions format with its own quirks (the
 * built-in OpenAI-format vendors under providers/<vendor>/). Each hook replaces one pure step of
 * the openai-compatible adapter and usually calls the default it replaces (exported from
 * transform.ts and errors.ts) before or after its own fix. Connection handling, deadlines,
 * cancellation and stream-end rules stay the adapter's.
 *
 * @example
 * const quirks: VendorQuirks = { request: (call) => ({ ...toVendorRequest(call), safe_prompt: false }) };
 * new OpenAICompatibleAdapter({ ...settings, quirks });
 */
export interface VendorQuirks {
  /** The request body (default: `toVendorRequest`). */
  request?(call: Pick<UpstreamCall, 'model' | 'request'>): Json;
  /** A parsed whole reply as a ChatCompletion, or undefined when it is not one (default: `fromVendorReply`). */
  reply?(json: unknown): ChatCompletion | undefined;
  /**
   * One SSE event (default: `readStreamEvent`); null skips it. `state` lives for one stream, for
   * vendors whose meaning depends on earlier events (a repeated finish chunk).
   */
  streamEvent?(event: string, data: string, state: Json): StreamItem | null;
  /** An error answer as a GatewayError (default: `fromVendorError`). */
  error?(status: number, headers: Headers, body: unknown, ctx: ErrorContext): GatewayError;
  /**
   * The key check: the path under the address to GET (default `/models`), and whether an answer
   * means the key was refused (default: 401 or 403).
   */
  check?: { path?: string; refused?(status: number, body: string): boolean };
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A `streamEvent` hook that lets a vendor fix each chunk object before it is read (`fix` may also
 * turn it into another stream item, or skip it with null). Everything that is not a chunk object
 * (`[DONE]`, error events, malformed data) is read as the default does. Each payload is parsed once.
 *
 * @example
 * streamEvent: chunkFixer((json) => ({ ...json, usage: json.usage ?? json.x_groq?.usage }))
 */
export function chunkFixer(fix: (json: Json, state: Json) => Json | StreamItem | null): NonNullable<VendorQuirks['streamEvent']> {
  return (event, data, state) => {
    let json: unknown;
    try {
      json = event === 'error' ? undefined : JSON.parse(data);
    } catch {
      json = undefined;
    }
    const chunkLike = isObject(json) && (json.error === undefined || json.error === null) && json.object !== 'error' && (Array.isArray(json.choices) || isObject(json.usage));
    if (!chunkLike) return readStreamEvent(event, data);
    const fixed = fix(json as Json, state);
    if (fixed === null) return null;
    return 'kind' in fixed && typeof fixed.kind === 'string' ? (fixed as StreamItem) : { kind: 'chunk', chunk: toChunk(fixed as Json) };
  };
}
