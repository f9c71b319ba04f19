import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorFixture, RecordedRequest } from './mock-upstream.js';
import { MockServer, vendorErrorFixture, vendorFixture, type BaseBehaviour } from './mock-server.js';

/**
 * A scriptable stand-in for the Gemini API (POST /v1beta/models/{model}:generateContent,
 * :streamGenerateContent?alt=sse, GET /v1beta/models), speaking its real wire format: the key
 * in `x-goog-api-key` (a wrong one gets Gemini's real 400 API_KEY_INVALID), whole
 * GenerateContentResponse objects per event with cumulative usageMetadata, CRLF framing, function
 * calls with no id (before Gemini 3) or signed with a thoughtSignature, and no end marker.
 *
 * @example
 * const mock = await new MockGemini({ apiKey: 'AIza-test' }).start();
 * mock.enqueue({ text: ['Hel', 'lo'], usage: { prompt: 9, candidates: 5, thoughts: 20 } });
 */

export const geminiFixture = (file: string): string => vendorFixture('google', file);

/** The OpenAPI-subset `Schema` fields `FunctionDeclaration.parameters` takes (anything else: 400 "Unknown name"). */
const schemaFields = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'properties', 'required', 'anyOf', 'default', 'example',
  'minItems', 'maxItems', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minProperties', 'maxProperties', 'propertyOrdering',
]);

/** Where a `parameters` schema uses a field Gemini's Schema lacks, as Gemini names the place ('…parameters.properties[0].value'). */
function unknownFields(node: unknown, at: string): Array<{ name: string; at: string }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [];
  const out: Array<{ name: string; at: string }> = [];
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (!schemaFields.has(k)) out.push({ name: k, at });
    else if (k === 'properties' && typeof v === 'object' && v !== null) Object.values(v).forEach((s, i) => out.push(...unknownFields(s, `${at}.properties[${i}].value`)));
    else if (k === 'items') out.push(...unknownFields(v, `${at}.items`));
    else if (k === 'anyOf' && Array.isArray(v)) v.forEach((s, i) => out.push(...unknownFields(s, `${at}.any_of[${i}]`)));
  }
  return out;
}

/**
 * Gemini's checks of function declarations: `parameters` and `parametersJsonSchema` are mutually
 * exclusive, and `parameters` refuses JSON Schema fields outside its subset, with the 400 body
 * Gemini sends (glowingjade/obsidian-smart-composer#455, openswarm-ai/openswarm#24).
 */
function refusedDeclarations(body: unknown): ErrorFixture | undefined {
  const tools = (body as { tools?: Array<{ functionDeclarations?: Array<Record<string, unknown>> }> } | undefined)?.tools ?? [];
  const problems: string[] = [];
  tools.forEach((t, i) =>
    (t.functionDeclarations ?? []).forEach((d, j) => {
      const at = `tools[${i}].function_declarations[${j}]`;
      if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) problems.push(`${at}: parameters and parameters_json_schema are mutually exclusive.`);
      for (const u of unknownFields(d.parameters, `${at}.parameters`)) problems.push(`Invalid JSON payload received. Unknown name "${u.name}" at '${u.at}': Cannot find field.`);
    }),
  );
  return problems.length > 0 ? { status: 400, body: { error: { code: 400, message: problems.join('\n'), status: 'INVALID_ARGUMENT' } } } : undefined;
}
export const geminiError = (name: string): ErrorFixture => vendorErrorFixture('google', name);

export interface GeminiBehaviour extends BaseBehaviour {
  /** Text pieces, one event each (a whole reply joins them). */
  text?: string[];
  /** Function calls, all in one event after the text (as Gemini sends them); `signature` signs the part. */
  calls?: Array<{ name: string; args: Record<string, unknown>; signature?: string; id?: string }>;
  usage?: { prompt: number; candidates: number; thoughts?: number; cached?: number };
  /** Default STOP. */
  finishReason?: string;
  /** Answer 200 with promptFeedback.blockReason and no candidates. */
  blockReason?: string;
  gapMs?: number;
  /** Stream: write this many events (the finishing one counts), then cut. Whole: half the body. */
  breakAfter?: number;
  model?: string;
}

type Route = 'generate' | 'models';

export class MockGemini extends MockServer<GeminiBehaviour, Route> {
  private seq = 0;
  models = ['models/gemini-2.5-flash'];

  constructor(private readonly options: { apiKey?: string } = {}) {
    super();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1beta`;
  }

  /** Scripts the next generate call (whole or streamed), or the next GET /models with `'models'`. */
  override enqueue(b: GeminiBehaviour, route: Route = 'generate'): this {
    return super.enqueue(b, route);
  }

  protected route(method: string, path: string, query: URLSearchParams): Route | undefined {
    if (method === 'GET' && path === '/v1beta/models') return 'models';
    if (method !== 'POST' || !path.startsWith('/v1beta/models/')) return undefined;
    if (path.endsWith(':generateContent')) return 'generate';
    // Whole and streamed calls share one script; the path tells them apart when answering.
    return path.endsWith(':streamGenerateContent') && query.get('alt') === 'sse' ? 'generate' : undefined;
  }

  protected refuseKey(req: IncomingMessage): ErrorFixture | undefined {
    return this.options.apiKey && req.headers['x-goog-api-key'] !== this.options.apiKey ? geminiError('google-api-key-invalid') : undefined;
  }

  protected notFound(path: string): ErrorFixture {
    return { status: 404, body: { error: { code: 404, message: `Method not found: ${path}`, status: 'NOT_FOUND' } } };
  }

  protected async answer(route: Route, scripted: GeminiBehaviour | undefined, record: RecordedRequest, res: ServerResponse): Promise<void> {
    if (route === 'models') return this.json(res, { models: this.models.map((name) => ({ name, displayName: name, supportedGenerationMethods: ['generateContent'] })) });
    const refused = refusedDeclarations(record.body);
    if (refused) return this.send(res, refused);
    const b = scripted ?? { text: ['Hello from the mock.'] };
    const stream = record.path.endsWith(':streamGenerateContent');
    const model = b.model ?? decodeURIComponent(/models\/([^:]+):/.exec(record.path)?.[1] ?? 'gemini-2.5-flash');
    const text = b.text ?? (b.calls ? [] : ['Hello from the mock.']);
    const u = b.usage ?? { prompt: 9, candidates: Math.max(1, Math.ceil(text.join('').length / 4)) };
    const usageMetadata = (candidates: number) => ({
      promptTokenCount: u.prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: u.prompt + candidates + (u.thoughts ?? 0),
      ...(u.thoughts ? { thoughtsTokenCount: u.thoughts } : {}),
      ...(u.cached ? { cachedContentTokenCount: u.cached } : {}),
    });
    const head = { modelVersion: model, responseId: `mockresp${++this.seq}` };
    const callParts = (b.calls ?? []).map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args }, ...(c.signature ? { thoughtSignature: c.signature } : {}) }));
    const candidate = (parts: unknown[], finish?: string) => ({ content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 });
    const finish = b.finishReason ?? 'STOP';
    if (b.blockReason) {
      const blocked = { promptFeedback: { blockReason: b.blockReason }, usageMetadata: { promptTokenCount: u.prompt, totalTokenCount: u.prompt }, ...head };
      return stream ? this.frames(res, [{ wire: `data: ${JSON.stringify(blocked)}\r\n\r\n`, counted: true }]) : this.json(res, blocked);
    }
    if (!stream) {
      const parts = [...(text.length > 0 ? [{ text: text.join('') }] : []), ...callParts];
      const reply = { candidates: [candidate(parts, finish)], usageMetadata: usageMetadata(u.candidates), ...head };
      return b.breakAfter !== undefined ? this.cut(res, JSON.stringify(reply)) : this.json(res, reply);
    }
    const events: unknown[] = text.map((t, i) => ({ candidates: [candidate([{ text: t }])], usageMetadata: usageMetadata(Math.ceil((u.candidates * (i + 1)) / Math.max(1, text.length))), ...head }));
    if (callParts.length > 0) events.push({ candidates: [candidate(callParts)], usageMetadata: usageMetadata(u.candidates), ...head });
    events.push({ candidates: [candidate([{ text: '' }], finish)], usageMetadata: usageMetadata(u.candidates), ...head });
    await this.frames(res, events.map((e) => ({ wire: `data: ${JSON.stringify(e)}\r\n\r\n`, counted: true })), b.gapMs, b.breakAfter);
  }
}
