import type { Readable } from 'node:stream';

/**
 * Calls `onLine` for each newline-ended line of a byte stream (NDJSON, the MCP stdio framing);
 * `onTooLong` once if a line grows past `max` bytes, after which the stream is ignored.
 */
export function readLines(stream: Readable, max: number, onLine: (line: string) => void, onTooLong: () => void): void {
  let parts: Buffer[] = [];
  let size = 0;
  let dead = false;
  stream.on('data', (chunk: Buffer) => {
    if (dead) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, nl));
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      size = 0;
      start = nl + 1;
      if (line.trim().length > 0) onLine(line);
      if (dead) return;
    }
    const rest = chunk.subarray(start);
    size += rest.length;
    if (size > max) {
      dead = true;
      return onTooLong();
    }
    if (rest.length > 0) parts.push(rest);
  });
}
