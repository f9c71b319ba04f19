import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serverSentEvents, type ServerSentEvent } from '../../kernel/index.js';
import { anthropicFixture } from '../support/mock-anthropic.js';
import { geminiFixture } from '../support/mock-gemini.js';
import { shape } from '../support/harness.js';

const test = suite(`kernel server-sent events reader (${shape})`);

async function read(pieces: Array<string | Uint8Array>): Promise<ServerSentEvent[]> {
  const out: ServerSentEvent[] = [];
  for await (const ev of serverSentEvents((async function* () {
    yield* pieces;
  })())) out.push(ev);
  return out;
}

/** The same bytes cut every `n` bytes, which splits lines, CRLF pairs and UTF-8 characters. */
const cut = (text: string, n: number): Uint8Array[] => {
  const bytes = Buffer.from(text, 'utf8');
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += n) out.push(bytes.subarray(i, i + n));
  return out;
};

test('recorded Anthropic (LF) and Gemini (CRLF) streams read the same whole or cut at every size', async () => {
  for (const wire of [anthropicFixture('anthropic-text.chunks.txt'), geminiFixture('google-text.chunks.txt')]) {
    const whole = await read([wire]);
    assert.ok(whole.length >= 3);
    for (const n of [1, 2, 3, 7, 64]) assert.equal(await read(cut(wire, n)), whole, `cut every ${n} bytes`);
  }
  const named = await read([anthropicFixture('anthropic-text.chunks.txt')]);
  assert.equal([named[0]?.event, named.at(-1)?.event], ['message_start', 'message_stop']);
});

test('comments, multi-line data, a lone CR line end, an unnamed event, and an event left open at EOF', async () => {
  const events = await read([': keep-alive\n', 'event: a\ndata: one\ndata: two\n\n', 'data: é\r', '\r', 'data:x\n\n', 'data: last']);
  assert.equal(events, [
    { event: 'a', data: 'one\ntwo' },
    { event: 'message', data: 'é' },
    { event: 'message', data: 'x' },
    { event: 'message', data: 'last' },
  ]);
});

test.run();
