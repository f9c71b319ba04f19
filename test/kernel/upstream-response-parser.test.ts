import type { IncomingHttpHeaders } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ResponseParser } from '../../kernel/upstream/response-parser.js';

const test = suite('kernel: upstream response parser (HTTP/1.1 replies)');

interface Seen {
  heads: { statusCode: number; headers: IncomingHttpHeaders; keepAlive: boolean }[];
  body: string;
  ends: number;
}

function parser(bodiless = false): { p: ResponseParser; seen: Seen } {
  const seen: Seen = { heads: [], body: '', ends: 0 };
  const p = new ResponseParser({
    head: (statusCode, head, keepAlive) => void seen.heads.push({ statusCode, headers: head.headers, keepAlive }),
    data: (bytes) => void (seen.body += bytes.toString('latin1')),
    end: () => void seen.ends++,
  });
  p.expect(bodiless);
  return { p, seen };
}

/** Feeds `text` in pieces of `size` bytes (1 = every byte boundary a network could split at). */
function feed(p: ResponseParser, text: string, size: number): void {
  const bytes = Buffer.from(text, 'latin1');
  for (let i = 0; i < bytes.length; i += size) p.feed(bytes.subarray(i, i + size));
}

const chunked = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n19;ext=1\r\n{"choices":[]}\n\ndata: [DO\r\n4\r\nNE]\n\r\n0\r\nx-trailer: 1\r\n\r\n';
const fixed = 'HTTP/1.1 200 OK\r\ncontent-length: 11\r\nX-Request-Id: a\r\n\r\n{"ok":true}';

test('a chunked body is the same whichever way the network splits it', () => {
  for (const size of [1, 2, 3, 7, 16, 1000]) {
    const { p, seen } = parser();
    feed(p, chunked, size);
    assert.is(seen.heads.length, 1, `split every ${size}`);
    assert.is(seen.heads[0]!.headers['content-type'], 'text/event-stream');
    assert.is(seen.heads[0]!.keepAlive, true);
    assert.is(seen.body, 'data: {"choices":[]}\n\ndata: [DONE]\n', `split every ${size}`);
    assert.is(seen.ends, 1);
    assert.is(p.reading, false);
  }
});

test('a Content-Length body ends at its length; names are lower-cased', () => {
  for (const size of [1, 5, 1000]) {
    const { p, seen } = parser();
    feed(p, fixed, size);
    assert.is(seen.body, '{"ok":true}');
    assert.is(seen.ends, 1);
    assert.is(seen.heads[0]!.headers['x-request-id'], 'a');
  }
});

test('no length and no chunking: the body runs to the close, and the connection is not reused', () => {
  const { p, seen } = parser();
  feed(p, 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nsome text', 4);
  assert.is(seen.heads[0]!.keepAlive, false);
  assert.is(seen.ends, 0);
  assert.is(p.closed(), true, 'the close ends it');
  assert.is(seen.body, 'some text');
  assert.is(seen.ends, 1);
});

test('a close inside a framed body is a broken reply, not an end', () => {
  const { p, seen } = parser();
  feed(p, 'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\npartial', 100);
  assert.is(p.inBody, true);
  assert.is(p.closed(), false);
  assert.is(seen.ends, 0);
});

test('interim 1xx answers are skipped; 204, 304 and a HEAD reply have no body', () => {
  const a = parser();
  feed(a.p, 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n' + fixed, 3);
  assert.equal(a.seen.heads.map((h) => h.statusCode), [200]);
  assert.is(a.seen.body, '{"ok":true}');
  for (const status of ['204 No Content', '304 Not Modified']) {
    const b = parser();
    feed(b.p, `HTTP/1.1 ${status}\r\nx: 1\r\n\r\n`, 100);
    assert.is(b.seen.ends, 1, status);
  }
  const c = parser(true);
  feed(c.p, 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n', 100);
  assert.is(c.seen.ends, 1, 'HEAD');
});

test('keep-alive: HTTP/1.1 unless Connection: close; HTTP/1.0 only with Connection: keep-alive', () => {
  const cases: [string, boolean][] = [
    ['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', false],
  ];
  for (const [text, keepAlive] of cases) {
    const { p, seen } = parser();
    feed(p, text, 100);
    assert.is(seen.heads[0]!.keepAlive, keepAlive, text);
    assert.is(seen.ends, 1, text);
  }
});

test('repeated headers as node:http gives them: set-cookie a list, first wins for single-valued ones, others joined', () => {
  const { p, seen } = parser();
  feed(p, 'HTTP/1.1 429 Too Many Requests\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nRetry-After: 7\r\nretry-after: 9\r\nVary: a\r\nvary: b\r\nx-empty:\r\ncontent-length: 0\r\n\r\n', 100);
  const h = seen.heads[0]!.headers;
  assert.equal(h['set-cookie'], ['a=1', 'b=2']);
  assert.is(h['retry-after'], '7');
  assert.is(h.vary, 'a, b');
  assert.is(h['x-empty'], '');
  assert.is(seen.heads[0]!.statusCode, 429);
});

test('bytes that are not an HTTP reply are refused with llhttp-style codes', () => {
  const bad: [string, string][] = [
    ['SSH-2.0-OpenSSH\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['HTTP/1.1 200 OK\r\nbad header\r\n\r\n', 'HPE_INVALID_HEADER_TOKEN'],
    ['HTTP/1.1 200 OK\r\n folded: x\r\n\r\n', 'HPE_INVALID_HEADER_TOKEN'],
    ['HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', 'HPE_INVALID_CONTENT_LENGTH'],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', 'HPE_INVALID_CHUNK_SIZE'],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabXY', 'HPE_INVALID_CHUNK_SIZE'],
    ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nabc', 'HPE_UNEXPECTED_CONTENT'],
    [`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 'HPE_HEADER_OVERFLOW'],
  ];
  for (const [text, code] of bad) {
    const { p } = parser();
    let err: { code?: string } | undefined;
    try {
      feed(p, text, 1000);
    } catch (e) {
      err = e as { code?: string };
    }
    assert.is(err?.code, code, JSON.stringify(text.slice(0, 40)));
  }
});

test.run();
