// Server-sent events from a fetch body: the `data:` of each event, as it arrives.

/**
 * Yields each event's data (its `data:` lines joined by newlines) from a ReadableStream of bytes.
 * Events end at a blank line (LF or CRLF); comments and other fields are skipped.
 */
export async function* sseData(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const data = dataOf(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (data !== null) yield data;
      }
    }
    const rest = dataOf(buffer);
    if (rest !== null) yield rest;
  } finally {
    reader.cancel().catch(() => {}); // a consumer that stops early (Stop) releases the connection
  }
}

function dataOf(event) {
  const lines = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
  return lines.length ? lines.join('\n') : null;
}
