import { readFileSync } from 'node:fs';
import type { Behaviour, ErrorFixture } from './mock-upstream.js';

/**
 * Vendor modes for the OpenAI-format mock upstream (test/support/mock-upstream.ts): answers made of
 * a vendor's recorded wire bytes from providers/<vendor>/__fixtures__/, so the built-in vendors'
 * quirks (OpenRouter's comment lines and repeated finish chunk, Groq's x_groq, Mistral's tool calls
 * without index, xAI's usage, DeepSeek's reasoning deltas) reach the adapter exactly as sent.
 *
 * @example
 * mock.enqueue(vendorStream('openrouter', 'openrouter-text.chunks.txt'));
 * mock.enqueue(vendorStream('groq', 'groq-text.chunks.txt', { cutAfter: 2 })); // then the socket is destroyed
 * mock.enqueue(vendorFailure('xai', 'xai-invalid-api-key'));
 */

/** A recorded fixture's text from providers/<vendor>/__fixtures__/ (from dist/test/support up to the package root). */
export function vendorFixture(vendor: string, file: string): string {
  return readFileSync(new URL(`../../../providers/${vendor}/__fixtures__/${file}`, import.meta.url), 'utf8');
}

/** A recorded whole reply, served byte for byte as the vendor sent it. */
export function vendorReply(vendor: string, file: string): Behaviour {
  const body = vendorFixture(vendor, file);
  return { raw: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body) };
}

/** The events of a recorded stream (comment lines kept), each with its blank-line terminator. */
export function streamEvents(text: string): string[] {
  return text.split(/(?<=\n\n)/).filter((e) => e.trim() !== '');
}

/**
 * A recorded stream, event by event (`gapMs` apart). `cutAfter`: write that many events, then
 * destroy the socket (a stream cut mid-way, without its end marker).
 */
export function vendorStream(vendor: string, file: string, opts: { cutAfter?: number; gapMs?: number } = {}): Behaviour {
  const events = streamEvents(vendorFixture(vendor, file));
  return {
    raw: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      const upTo = opts.cutAfter ?? events.length;
      void (async () => {
        for (const e of events.slice(0, upTo)) {
          if (res.destroyed) return;
          res.write(e);
          if (opts.gapMs) await new Promise((done) => setTimeout(done, opts.gapMs));
        }
        if (opts.cutAfter !== undefined) {
          // Give the written events time to leave before the reset.
          setTimeout(() => res.socket?.destroy(), 20);
        } else res.end();
      })();
    },
  };
}

/** A recorded vendor error body (`<name>.error.json`: `{ source, status, headers?, body }`). */
export function vendorErrorFixture(vendor: string, name: string): ErrorFixture {
  return JSON.parse(vendorFixture(vendor, `${name}.error.json`)) as ErrorFixture;
}

export function vendorFailure(vendor: string, name: string): Behaviour {
  return { error: vendorErrorFixture(vendor, name) };
}

/**
 * A stream in Mistral's manner, scripted rather than recorded: usage arrives unasked on the finish
 * chunk (Mistral refuses `stream_options`), as in fixture mistral-text.chunks.txt.
 */
export function usageOnFinishStream(pieces: string[], usage: { prompt_tokens: number; completion_tokens: number }): Behaviour {
  return {
    raw: (req, res, record) => {
      const model = (record.body as { model?: string } | undefined)?.model ?? 'mock-model';
      const head = { id: 'cmpl-usage-on-finish', object: 'chat.completion.chunk', created: 1769088720, model };
      const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const [i, p] of pieces.entries()) res.write(frame({ ...head, choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: p } : { content: p }, finish_reason: null }] }));
      const total = usage.prompt_tokens + usage.completion_tokens;
      res.end(frame({ ...head, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: { ...usage, total_tokens: total } }) + 'data: [DONE]\n\n');
      void req;
    },
  };
}
