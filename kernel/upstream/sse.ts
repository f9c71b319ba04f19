/** One server-sent event: its `event:` name (`message` when unnamed) and its joined `data:` lines. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * Server-sent events from a response body (the WHATWG event-stream rules): lines end in LF, CR
 * or CRLF — split anywhere by the network, as are UTF-8 characters — a blank line ends an event,
 * `:` lines are keep-alive comments. An event left open at the end of the body is still delivered.
 *
 * @example
 * for await (const ev of serverSentEvents(res.body)) if (ev.event === 'message_stop') break;
 */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let data: string[] = [];
  let event = '';
  const take = (line: string): ServerSentEvent | undefined => {
    if (line === '') {
      const done = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : undefined;
      data = [];
      event = '';
      return done;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    return undefined;
  };
  const lines = function* (text: string, final: boolean): Generator<string> {
    let all = pending + text;
    // A CR at the very end may be the first half of a CRLF that the next piece completes.
    pending = !final && all.endsWith('\r') ? '\r' : '';
    if (pending) all = all.slice(0, -1);
    const parts = all.replace(/\r\n?/g, '\n').split('\n');
    const rest = final ? '' : parts.pop()!;
    pending = rest + pending;
    yield* parts;
  };
  for await (const piece of body) {
    for (const line of lines(typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true }), false)) {
      const ev = take(line);
      if (ev) yield ev;
    }
  }
  for (const line of [...lines(decoder.decode(), true), '']) {
    const ev = take(line);
    if (ev) yield ev;
  }
}
