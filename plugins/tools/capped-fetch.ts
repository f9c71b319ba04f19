import type { FetchLike } from '@modelcontextprotocol/client';
import { ToolServerFailure } from './mcp.js';

/**
 * A fetch that the MCP client reads tool servers through (and the OAuth requests, oauth/http.ts).
 * It refuses redirects (a server could otherwise redirect around the origin allow-list) and stops
 * reading a response at `maxBytes`, since the SDK buffers a whole result before its caller can cut
 * it (docs/TOOLS-NOTES.md): a body as a whole, an event stream (SSE) per event, because one stream
 * carries every message of a session. Passing the limit errors the body and calls `overflow` at
 * once: the SDK only reports an event stream's error and would leave the call waiting for its
 * time-out, so the caller ends the call itself (mcp.ts withServer).
 */
export function cappedFetch(maxBytes: number, overflow: () => void = () => {}): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, { ...init, redirect: 'manual' });
    if (res.status >= 300 && res.status < 400) throw new ToolServerFailure('redirect');
    if (!res.body) return res;
    const events = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const size = events ? new EventSize() : new BodySize();
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!size.over(chunk, maxBytes)) return controller.enqueue(chunk);
        overflow();
        controller.error(new ToolServerFailure('too_large'));
      },
    });
    return new Response(res.body.pipeThrough(limiter), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

interface Size {
  /** Adds a chunk; true once the body (or one event) holds more than `max` bytes. */
  over(chunk: Uint8Array, max: number): boolean;
}

class BodySize implements Size {
  private bytes = 0;
  over(chunk: Uint8Array, max: number): boolean {
    return (this.bytes += chunk.byteLength) > max;
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * An event stream's size per event: an event ends at a blank line (LF LF or LF CR LF, also split
 * across chunks). A stream whose lines end with a bare CR is counted as one event: stricter, never
 * looser.
 */
class EventSize implements Size {
  private bytes = 0;
  /** The two bytes before the current chunk. */
  private last: [number, number] = [0, 0];

  over(chunk: Uint8Array, max: number): boolean {
    const at = (i: number): number => (i >= 0 ? chunk[i]! : this.last[2 + i]!);
    let start = 0;
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      if (at(i - 1) !== LF && !(at(i - 1) === CR && at(i - 2) === LF)) continue;
      if (this.bytes + (i + 1 - start) > max) return true;
      this.bytes = 0;
      start = i + 1;
    }
    this.bytes += chunk.byteLength - start;
    this.last = [at(chunk.byteLength - 2), at(chunk.byteLength - 1)];
    return this.bytes > max;
  }
}
