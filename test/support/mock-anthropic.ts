import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorFixture, RecordedRequest } from './mock-upstream.js';
import { MockServer, vendorErrorFixture, vendorFixture, type BaseBehaviour } from './mock-server.js';

/**
 * A scriptable stand-in for Anthropic's Messages API (POST /v1/messages whole or SSE, GET
 * /v1/models), speaking its real wire format: `x-api-key` checked (Anthropic's real 401 body),
 * message objects with its usage fields, and streams as Anthropic sends them (message_start,
 * content blocks with text and input_json deltas, pings, message_delta with the running output
 * total, message_stop).
 *
 * @example
 * const mock = await new MockAnthropic({ apiKey: 'sk-ant-test' }).start();
 * mock.enqueue({ text: ['Hel', 'lo'], usage: { input: 12, output: 5 } });
 * mock.enqueue({ error: anthropicError('anthropic-overloaded') });
 */

export const anthropicFixture = (file: string): string => vendorFixture('anthropic', file);
export const anthropicError = (name: string): ErrorFixture => vendorErrorFixture('anthropic', name);

export interface AnthropicBehaviour extends BaseBehaviour {
  /** Text pieces (one text_delta each; a whole reply joins them). */
  text?: string[];
  /** tool_use blocks after the text; `input` is streamed as two input_json_delta pieces (an empty one as a single empty piece). */
  tools?: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  usage?: { input: number; output: number; cacheRead?: number; cacheCreation?: number };
  /** Default: tool_use when tools are scripted, else end_turn. */
  stop?: string;
  gapMs?: number;
  /** Stream: write this many counted frames (text pieces, tool blocks, the message_delta), then cut. Whole: half the body. */
  breakAfter?: number;
  model?: string;
}

type Route = 'messages' | 'models';

export class MockAnthropic extends MockServer<AnthropicBehaviour, Route> {
  private seq = 0;
  models = ['claude-sonnet-4-5-20250929'];

  constructor(private readonly options: { apiKey?: string } = {}) {
    super();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  override enqueue(b: AnthropicBehaviour, route: Route = 'messages'): this {
    return super.enqueue(b, route);
  }

  protected route(method: string, path: string): Route | undefined {
    if (method === 'POST' && path === '/v1/messages') return 'messages';
    if (method === 'GET' && path === '/v1/models') return 'models';
    return undefined;
  }

  protected refuseKey(req: IncomingMessage): ErrorFixture | undefined {
    return this.options.apiKey && req.headers['x-api-key'] !== this.options.apiKey ? anthropicError('anthropic-invalid-key') : undefined;
  }

  protected notFound(): ErrorFixture {
    return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } } };
  }

  protected async answer(route: Route, scripted: AnthropicBehaviour | undefined, record: RecordedRequest, res: ServerResponse): Promise<void> {
    if (route === 'models') {
      return this.json(res, { data: this.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' })), has_more: false, first_id: this.models[0], last_id: this.models.at(-1) });
    }
    const b = scripted ?? { text: ['Hello from the mock.'] };
    const req = record.body as { model?: string; stream?: boolean } | undefined;
    const text = b.text ?? (b.tools ? [] : ['Hello from the mock.']);
    const tools = b.tools ?? [];
    const u = b.usage ?? { input: 10, output: Math.max(1, Math.ceil(text.join('').length / 4)) };
    const usage = { input_tokens: u.input, cache_creation_input_tokens: u.cacheCreation ?? 0, cache_read_input_tokens: u.cacheRead ?? 0, output_tokens: u.output, service_tier: 'standard' };
    const stop = b.stop ?? (tools.length > 0 ? 'tool_use' : 'end_turn');
    const id = `msg_mock${++this.seq}`;
    const model = b.model ?? req?.model ?? 'claude-sonnet-4-5-20250929';
    const content = [...(text.length > 0 ? [{ type: 'text', text: text.join('') }] : []), ...tools.map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: t.input }))];
    if (req?.stream !== true) {
      const message = { model, id, type: 'message', role: 'assistant', content, stop_reason: stop, stop_sequence: null, usage };
      return b.breakAfter !== undefined ? this.cut(res, JSON.stringify(message)) : this.json(res, message);
    }
    const frame = (o: Record<string, unknown>, counted = false) => ({ wire: `event: ${String(o.type)}\ndata: ${JSON.stringify(o)}\n\n`, counted });
    const out = [frame({ type: 'message_start', message: { model, id, type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })];
    let index = 0;
    if (text.length > 0) {
      out.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }), frame({ type: 'ping' }));
      for (const t of text) out.push(frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }, true));
      out.push(frame({ type: 'content_block_stop', index: index++ }));
    }
    for (const t of tools) {
      const args = JSON.stringify(t.input);
      const half = Math.floor(args.length / 2);
      out.push(frame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: t.id, name: t.name, input: {} } }, true));
      // A call with no arguments is one empty input_json_delta, as Anthropic streams it.
      const pieces = args === '{}' ? [''] : ['', args.slice(0, half), args.slice(half)];
      for (const piece of pieces) out.push(frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }));
      out.push(frame({ type: 'content_block_stop', index: index++ }));
    }
    // output_tokens here is the running total, as Anthropic sends it (not an increment).
    out.push(frame({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.output } }, true), frame({ type: 'message_stop' }));
    await this.frames(res, out, b.gapMs, b.breakAfter);
  }
}
