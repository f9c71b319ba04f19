import { ChunkWriter, usageOf, type ChatCompletionChunk, type StreamStep, type StreamTranslator, type Usage } from '../../kernel/index.js';
import { finishOf, isObject, missingSignature, missingSignatureBody, readPiece } from './reply.js';

/**
 * Gemini `streamGenerateContent?alt=sse` events → Chat Completions chunks (pure, one per stream).
 * Each event is a whole GenerateContentResponse holding the next text and any complete function
 * calls (Gemini never splits a call's arguments). usageMetadata is cumulative, so the last one
 * counts. There is no end marker: the event with a finishReason (or a blocked prompt) completes
 * the reply and yields the finish chunk and then the usage chunk.
 */
export class GeminiStream implements StreamTranslator {
  private readonly out = new ChunkWriter();
  private usage: Usage | undefined;
  private calls = 0;

  push(_event: string, data: string): StreamStep {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return { chunks: [], malformed: true };
    }
    if (isObject(json) && isObject(json.error)) {
      return { chunks: [], error: { status: typeof json.error.code === 'number' ? json.error.code : 500, body: json } };
    }
    const piece = readPiece(json);
    if (!piece) return { chunks: [], malformed: true };
    const head = this.out.head;
    this.out.head = { ...head, id: piece.id || head.id, model: piece.model || head.model };
    if (piece.usage) this.usage = piece.usage;
    const out: ChatCompletionChunk[] = [];
    const w = this.out;
    if (piece.text) out.push(w.delta({ content: piece.text }));
    if (piece.calls.length > 0) {
      const tool_calls = piece.calls.map((c) => ({ index: this.calls++, ...c }));
      out.push(w.delta({ tool_calls }));
    }
    // Only an event that carried usageMetadata reports usage: its counts cover the text so far.
    if (piece.finish === undefined) return { chunks: out, usage: piece.usage };
    if (piece.finish === missingSignature) return { chunks: out, error: { status: 400, body: missingSignatureBody } };
    const finish = piece.finish === 'BLOCKED' ? 'content_filter' : finishOf(piece.finish, this.calls > 0);
    const usage = this.usage ?? usageOf(0, 0);
    out.push(w.delta({}, finish), w.usage(usage));
    return { chunks: out, finished: true, usage };
  }
}
