import { usageChunk, type ChatCompletionChunk, type Usage } from '../../kernel/index.js';

/**
 * Usage as the Chat Completions format streams it (SPEC.md "usage chunk"): once, on a final chunk
 * with `choices: []`. Vendors differ: OpenAI sends exactly that; Mistral and DeepSeek put usage on
 * the finish chunk and send no usage chunk; Groq puts it on the finish chunk **and** sends the
 * usage chunk. So usage on a chunk with choices is taken off it and held; a usage chunk the vendor
 * sends replaces what was held; and whatever is still held when the reply ends is sent as the
 * usage chunk. A client that sums usage over chunks counts it once.
 *
 * @example
 * const tail = new UsageTail();
 * for (const c of chunks) yield tail.pass(c);
 * const last = tail.end(); if (last) yield last;
 */
export class UsageTail {
  private held: { usage: Usage; like: ChatCompletionChunk } | undefined;

  /** The chunk to send now: a chunk with choices loses its usage (held for the end); a usage chunk goes as is. */
  pass(chunk: ChatCompletionChunk): ChatCompletionChunk {
    if (!chunk.usage) return chunk;
    if (chunk.choices.length === 0) {
      this.held = undefined;
      return chunk;
    }
    this.held = { usage: chunk.usage, like: chunk };
    delete chunk.usage;
    return chunk;
  }

  /** The usage chunk still owed when the reply ends (once), or undefined. */
  end(): ChatCompletionChunk | undefined {
    const held = this.held;
    this.held = undefined;
    return held && usageChunk({ id: held.like.id, model: held.like.model, created: held.like.created }, held.usage);
  }
}
