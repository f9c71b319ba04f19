import { argumentsDelta, ChunkWriter, vendorCount, usageOf, type StreamStep, type StreamTranslator, type Usage } from '../../kernel/index.js';
import { argumentsText, finishOf, isObject, str, usageFrom } from './reply.js';
import { statusOfType } from './errors.js';

/**
 * Anthropic stream events → Chat Completions chunks (pure, one translator per stream).
 *
 * message_start gives the id, model and input usage but no chunk: the first chunk (with the
 * assistant role) is the first text or tool call, so an error event before any content is still
 * an ordinary error the dispatcher may retry. Tool-use blocks become tool_calls numbered in the
 * order they start. message_delta carries the stop reason and the final output count — a running
 * total, so it replaces the message_start count rather than adding to it — and yields the finish
 * chunk and then the usage chunk. message_stop is the end marker.
 */
export class AnthropicStream implements StreamTranslator {
  private readonly out = new ChunkWriter();
  private usage: Usage | undefined;
  private rawUsage: Record<string, unknown> = {};
  /** Content block index → tool_calls index. */
  private readonly tools = new Map<number, number>();
  /** Tool calls (by tool_calls index) whose arguments have begun: a call that ends without any gets `{}`. */
  private readonly argued = new Set<number>();

  push(event: string, data: string): StreamStep {
    let ev: unknown;
    try {
      ev = JSON.parse(data);
    } catch {
      return { chunks: [], malformed: true };
    }
    if (!isObject(ev)) return { chunks: [], malformed: true };
    const type = str(ev.type) ?? event;
    if (type === 'error' || event === 'error') {
      const e = isObject(ev.error) ? ev.error : {};
      return { chunks: [], error: { status: statusOfType(str(e.type)), body: ev } };
    }
    if (type === 'message_start' && isObject(ev.message)) {
      const m = ev.message;
      this.out.head = { ...this.out.head, id: str(m.id) ?? '', model: str(m.model) ?? '' };
      this.rawUsage = isObject(m.usage) ? { ...m.usage } : {};
      this.usage = usageFrom(this.rawUsage);
      return { chunks: [], usage: this.usage };
    }
    if (type === 'content_block_start' && isObject(ev.content_block)) {
      const b = ev.content_block;
      if (b.type === 'tool_use') {
        const index = this.tools.size;
        this.tools.set(vendorCount(ev.index), index);
        const first = { index, id: str(b.id) ?? '', type: 'function' as const, function: { name: str(b.name) ?? '', arguments: '' } };
        // A prefilled input (rare) arrives whole here instead of as deltas.
        if (isObject(b.input) && Object.keys(b.input).length > 0) {
          first.function.arguments = argumentsText(b.input);
          this.argued.add(index);
        }
        return { chunks: [this.out.delta({ tool_calls: [first] })] };
      }
      if (b.type === 'text' && str(b.text)) return { chunks: [this.out.delta({ content: str(b.text)! })] };
      return { chunks: [] };
    }
    if (type === 'content_block_delta' && isObject(ev.delta)) {
      const d = ev.delta;
      if (d.type === 'text_delta' && typeof d.text === 'string') return { chunks: d.text === '' ? [] : [this.out.delta({ content: d.text })] };
      const tool = this.tools.get(vendorCount(ev.index));
      if (d.type === 'input_json_delta' && tool !== undefined && str(d.partial_json)) {
        this.argued.add(tool);
        return { chunks: [this.out.delta({ tool_calls: [argumentsDelta(tool, str(d.partial_json)!)] })] };
      }
      return { chunks: [] }; // thinking, signature and citation deltas are not Chat Completions content
    }
    if (type === 'message_delta') {
      // Newer API versions repeat the input counts here; output_tokens is the running total.
      if (isObject(ev.usage)) this.rawUsage = { ...this.rawUsage, ...ev.usage };
      this.usage = usageFrom(this.rawUsage) ?? usageOf(0, 0);
      const stop = isObject(ev.delta) ? ev.delta.stop_reason : undefined;
      if (stop === undefined || stop === null) return { chunks: [], usage: this.usage };
      return { chunks: [this.out.delta({}, finishOf(stop)), this.out.usage(this.usage)], finished: true, usage: this.usage };
    }
    if (type === 'content_block_stop') {
      // A call with no arguments arrives as one empty input_json_delta: the client still needs
      // valid JSON, as the whole reply gives it (`{}`).
      const tool = this.tools.get(vendorCount(ev.index));
      if (tool === undefined || this.argued.has(tool)) return { chunks: [] };
      this.argued.add(tool);
      return { chunks: [this.out.delta({ tool_calls: [argumentsDelta(tool, '{}')] })] };
    }
    if (type === 'message_stop') return { chunks: [], ended: true };
    return { chunks: [] }; // ping, unknown future events
  }
}
