import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SseDecoder, type SseEvent } from '../../providers/openai-compatible/sse.js';
import { readFixture } from '../support/mock-upstream.js';
import { shape } from '../support/harness.js';

const test = suite(`SSE decoder (${shape})`);

/** Feeds the pieces in order and collects every event, including those flushed at the end. */
function feed(...pieces: Array<string | Uint8Array>): SseEvent[] {
  const d = new SseDecoder();
  const out = pieces.flatMap((p) => d.push(p));
  return [...out, ...d.end()];
}
const data = (events: SseEvent[]) => events.map((e) => e.data);

test('several events in one network chunk', () => {
  assert.equal(data(feed('data: a\n\ndata: b\n\ndata: [DONE]\n\n')), ['a', 'b', '[DONE]']);
});

test('a line split anywhere, including inside "data:" and between CR and LF', () => {
  assert.equal(data(feed('da', 'ta: {"x"', ':1}\r', '\n\r\n', 'data: y\r\n\r\n')), ['{"x":1}', 'y']);
  assert.equal(data(feed('data: a\r', '\r', 'data: b\n', '\n')), ['a', 'b']); // CR CR = line end + blank line
});

test('CRLF, bare CR and LF line endings', () => {
  assert.equal(data(feed('data: a\r\n\r\ndata: b\r\rdata: c\n\n')), ['a', 'b', 'c']);
});

test('comments, blank lines, unknown fields, event names and multi-line data', () => {
  const events = feed(': keep-alive\n\n\n\nid: 7\nretry: 100\nevent: ping\ndata: one\ndata: two\n\ndata:no-space\n\n');
  assert.equal(events, [
    { event: 'ping', data: 'one\ntwo' },
    { event: 'message', data: 'no-space' },
  ]);
});

test('a UTF-8 character split across network chunks', () => {
  const bytes = new TextEncoder().encode('data: héllo 👋\n\n');
  const cut = bytes.indexOf(0xf0) + 2; // inside the emoji's four bytes
  assert.equal(data(feed(bytes.slice(0, 8), bytes.slice(8, cut), bytes.slice(cut))), ['héllo 👋']);
});

test('an event without its closing blank line is delivered at the end', () => {
  assert.equal(data(feed('data: a\n\ndata: [DONE]')), ['a', '[DONE]']);
  assert.equal(data(feed('data: a\n\ndata: [DONE]\n')), ['a', '[DONE]']);
});

test("llama.cpp's `error:` line is an event of its own", () => {
  assert.equal(feed(readFixture('llamacpp-error-line.chunks.txt')), [
    { event: 'error', data: '{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}' },
  ]);
});

test('the recorded OpenAI stream, byte by byte, gives the same events as in one piece', () => {
  const wire = readFixture('openai-text.chunks.txt');
  const whole = feed(wire);
  const bytes = new TextEncoder().encode(wire);
  const single = feed(...Array.from(bytes, (b) => new Uint8Array([b])));
  assert.is(whole.length, 10);
  assert.is(whole.at(-1)?.data, '[DONE]');
  assert.equal(single, whole);
});

test.run();
