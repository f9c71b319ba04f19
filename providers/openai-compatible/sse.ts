/** One server-sent event: its `event:` name (default `message`) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * An incremental server-sent-events decoder (the WHATWG event-stream rules, plus llama.cpp's
 * non-standard `error:` field, which older llama-server builds use for a stream error).
 *
 * Network chunks may split a line, a CRLF pair or a UTF-8 character anywhere; several events may
 * arrive in one chunk. Comments (`:`) and unknown fields are skipped; a blank line ends an event.
 *
 * @example
 * const sse = new SseDecoder();
 * for await (const buf of body) for (const ev of sse.push(buf)) handle(ev.data);
 * for (const ev of sse.end()) handle(ev.data);
 */
export class SseDecoder {
  private readonly text = new TextDecoder('utf-8');
  private line = '';
  /** The previous chunk ended in CR: a LF that starts the next one belongs to it. */
  private pendingCr = false;
  private data: string[] = [];
  private event = '';

  /** Feeds bytes (or text); returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    const s = typeof chunk === 'string' ? chunk : this.text.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && i === 0 && this.pendingCr) {
        this.pendingCr = false;
        start = 1;
        continue;
      }
      this.line += s.slice(start, i);
      this.takeLine(out);
      if (c === 13 && s.charCodeAt(i + 1) === 10) {
        i++;
        this.pendingCr = false;
      } else this.pendingCr = c === 13 && i === s.length - 1;
      start = i + 1;
    }
    if (start < s.length) {
      this.line += s.slice(start);
      this.pendingCr = false;
    }
    return out;
  }

  /** End of input: an event not closed by a blank line is still delivered (lenient for `data: [DONE]` at EOF). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.text.decode();
    if (rest) this.line += rest;
    if (this.line) this.takeLine(out);
    this.dispatch(out);
    return out;
  }

  private takeLine(out: SseEvent[]): void {
    const line = this.line;
    this.line = '';
    if (line === '') return this.dispatch(out);
    if (line.charCodeAt(0) === 58) return; // ':' comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'error') {
      // llama.cpp: `error: {json}` is its own event; keep it apart from any data lines.
      this.dispatch(out);
      out.push({ event: 'error', data: value });
    }
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.event = '';
  }
}
