import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, serviceForSuite, shape, startService } from '../support/harness.js';
import { parsePlainHead } from '../../kernel/http/direct/head.js';

/**
 * The front's own HTTP/1.1 reader (kernel/http/direct/): what it answers is what node:http
 * answers (head, framing, keep-alive), requests that are not plain go to node:http on the same
 * connection, and bodies that arrive in pieces, late or not at all are read or dropped as there.
 */
const test = suite(`http front: its own HTTP/1.1 reader (${shape})`);
const probeModule = fileURLToPath(new URL('./fixtures/probe-plugin.js', import.meta.url));
const service = serviceForSuite(test, { plugins: { probe: { module: probeModule } } });

interface Answer {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: string;
}

/** The answers in `text`, in order: Content-Length or chunked bodies. */
function answers(text: string): Answer[] {
  const out: Answer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const head = rest.slice(0, end);
    const lines = head.split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const status = Number(lines[0]!.split(' ')[1]);
    rest = rest.slice(end + 4);
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const eol = rest.indexOf('\r\n');
        if (eol === -1) return out;
        const size = parseInt(rest.slice(0, eol), 16);
        body += rest.slice(eol + 2, eol + 2 + size);
        rest = rest.slice(eol + 2 + size + 2);
        if (size === 0) break;
      }
    } else if (status !== 100) {
      const length = Number(headers['content-length'] ?? 0);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    out.push({ status, head, headers, body });
  }
  return out;
}

/**
 * Writes each piece on one connection (`gapMs` apart) and reads until `count` answers arrived or
 * the server closed; `closed` says which.
 */
function exchange(pieces: string[], count: number, gapMs = 0): Promise<{ answers: Answer[]; closed: boolean }> {
  return new Promise((done, fail) => {
    const s = connect({ host: '127.0.0.1', port: service().service.port });
    let text = '';
    let finished = false;
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      s.destroy();
      done({ answers: answers(text), closed });
    };
    s.setEncoding('latin1');
    s.on('data', (d: string) => {
      text += d;
      if (answers(text).filter((a) => a.status !== 100).length >= count) finish(false);
    });
    s.on('close', () => finish(true));
    s.on('error', (err) => (text ? finish(true) : fail(err)));
    s.once('connect', async () => {
      for (const p of pieces) {
        if (s.destroyed) return;
        s.write(p, 'latin1');
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

const front = (): { directServed: number; bodies: { heldBytes: number } } => (service().service as unknown as { http: { directServed: number; bodies: { heldBytes: number } } }).http;
/** How many requests `run` had read by the front's own reader. */
async function served(run: () => Promise<unknown>): Promise<number> {
  const before = front().directServed;
  await run();
  return front().directServed - before;
}

const post = (path: string, body: string, extra = ''): string => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const names = (a: Answer): string[] => Object.keys(a.headers).sort();

test('the same answer as node:http: status line, headers and body', async () => {
  let viaNode!: Answer;
  let direct!: Answer;
  assert.is(await served(async () => (viaNode = (await exchange([post('/probe/echo', '[1,2]')], 1)).answers[0]!)), 0);
  assert.is(await served(async () => (direct = (await exchange([post('/probe/echo-direct', '[1,2]')], 1)).answers[0]!)), 1);
  assert.is(direct.status, 200);
  assert.is(direct.head.split('\r\n')[0], 'HTTP/1.1 200 OK');
  assert.equal(names(direct), names(viaNode));
  assert.equal(direct.body, '{"kind":"array"}');
  for (const h of ['content-type', 'content-length', 'connection', 'keep-alive']) assert.is(direct.headers[h], viaNode.headers[h], h);
  assert.match(direct.headers['x-svc-request-id']!, /^req_/);
  assert.is(direct.headers['x-request-id'], direct.headers['x-svc-request-id']);
  assert.ok(Math.abs(Date.parse(direct.headers.date!) - Date.now()) < 5000, direct.headers.date);
  // A body with non-ASCII text: its length in UTF-8 bytes, the bytes as node:http sends them.
  // (The exchange reads and writes latin1: one character a byte.)
  const text = '"h\\u00e9llo \\u2713 \\ud83d\\ude00"';
  const [a, b] = await Promise.all([exchange([post('/probe/text', text)], 1), exchange([post('/probe/text-direct', text)], 1)]);
  assert.is(b.answers[0]!.body, a.answers[0]!.body);
  assert.is(Buffer.from(b.answers[0]!.body, 'latin1').toString('utf8'), '{"text":"héllo ✓ 😀"}');
  assert.is(b.answers[0]!.headers['content-length'], String(b.answers[0]!.body.length));
  // A streamed answer: chunked framing, as node:http writes a body of unknown length.
  const stream = (await exchange([post('/probe/stream-direct', '{"parts":["a","b"]}')], 1)).answers[0]!;
  assert.is(stream.headers['transfer-encoding'], 'chunked');
  assert.is(stream.body, 'data: a\n\ndata: b\n\ndata: [DONE]\n\n');
});

test('keep-alive: requests one after another and pipelined on one connection are answered in order', async () => {
  const one = await exchange([post('/probe/echo-direct', '[1]'), post('/probe/echo-direct', '{}'), post('/probe/echo-direct', '"x"')], 3, 20);
  assert.equal(one.answers.map((a) => a.body), ['{"kind":"array"}', '{"kind":"object"}', '{"kind":"string"}']);
  const ids = new Set(one.answers.map((a) => a.headers['x-svc-request-id']));
  assert.is(ids.size, 3, 'each request has its own id');
  const piped = await exchange([post('/probe/echo-direct', '[1]') + post('/probe/echo-direct', '{}') + post('/probe/echo-direct', '"x"')], 3);
  assert.equal(piped.answers.map((a) => a.body), ['{"kind":"array"}', '{"kind":"object"}', '{"kind":"string"}']);
  assert.not.ok(piped.closed);
});

test('other requests on the same connection go to node:http, before and after', async () => {
  let mixed!: { answers: Answer[] };
  const read = await served(
    async () =>
      (mixed = await exchange(
        [post('/probe/echo-direct', '[1]'), 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', post('/probe/echo-direct', '{}'), post('/probe/echo', '"x"')],
        4,
        20,
      )),
  );
  assert.is(read, 1, 'after the hand-off node:http keeps the connection');
  assert.equal(mixed.answers.map((a) => a.status), [200, 200, 200, 200]);
  assert.equal(mixed.answers[2]!.body, '{"kind":"object"}');
  assert.equal(mixed.answers[3]!.body, '{"kind":"string"}');
  // Pipelined in one write: the hand-off keeps every byte after the first request.
  const piped = await exchange([post('/probe/echo-direct', '[1]') + 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' + post('/probe/echo-direct', '{}')], 3);
  assert.equal(piped.answers.map((a) => a.status), [200, 200, 200]);
  assert.is(piped.answers[2]!.body, '{"kind":"object"}');
});

test('requests that are not plain are answered by node:http: chunked, Expect, a head in pieces, bad framing', async () => {
  const chunked = `POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n`;
  assert.is(await served(async () => assert.is((await exchange([chunked], 1)).answers[0]!.body, '{"kind":"array"}')), 0);
  const expect = await exchange([`POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n`, '{}'], 1, 50);
  assert.equal(expect.answers.map((a) => a.status), [100, 200]);
  const pieces = await exchange(['POST /probe/echo-direct HTTP/1.1\r\nHost: 127.', '0.0.1\r\nContent-Length: 2\r\n\r', '\n[]'], 1, 30);
  assert.is(pieces.answers[0]!.body, '{"kind":"array"}');
  // Two lengths: node:http's 400 in the spec's shape, and the connection closed (no smuggling).
  const twice = await exchange([`POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 30\r\n\r\n[]`], 1);
  assert.is(twice.answers[0]!.status, 400);
  assert.is(JSON.parse(twice.answers[0]!.body).error.code, 'invalid_request');
  const both = await exchange([`POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`], 1);
  assert.is(both.answers[0]!.status, 400);
});

test('a body that arrives in pieces, late, is read whole', async () => {
  const head = `POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 9\r\n\r\n`;
  let r!: { answers: Answer[] };
  assert.is(await served(async () => (r = await exchange([head, '[1,', '2,', '3]  ', post('/probe/echo-direct', '{}')], 2, 40))), 2);
  assert.equal(r.answers.map((a) => a.body), ['{"kind":"array"}', '{"kind":"object"}']);
});

test('an answer before the body was read: the rest is dropped and the connection serves the next request', async () => {
  const head = `POST /probe/early-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6000\r\n\r\n`;
  const r = await exchange([head, 'x'.repeat(3000), 'x'.repeat(3000), post('/probe/echo-direct', '[]')], 2, 40);
  assert.equal(r.answers.map((a) => a.status), [401, 200]);
  assert.is(r.answers[1]!.body, '{"kind":"array"}');
});

test('connection: close is answered with Connection: close and the connection ends', async () => {
  const r = await exchange([post('/probe/echo-direct', '[]', 'Connection: close\r\n')], 2);
  assert.is(r.answers.length, 1);
  assert.is(r.answers[0]!.headers.connection, 'close');
  assert.ok(r.closed);
});

test('a client that leaves mid-body: the service goes on serving, its bytes given back', async () => {
  await new Promise<void>((done) => {
    const s = connect({ host: '127.0.0.1', port: service().service.port }, () => {
      s.write(`POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n${' '.repeat(1000)}`);
      setTimeout(() => {
        s.destroy();
        done();
      }, 50);
    });
  });
  await new Promise((r) => setTimeout(r, 50));
  assert.is(front().bodies.heldBytes, 0);
  assert.is((await exchange([post('/probe/echo-direct', '[]')], 1)).answers[0]!.status, 200);
});

test('the head parser takes only the plainest form', () => {
  const ok = parsePlainHead('POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nAuthorization: Bearer k \r\nConnection: keep-alive');
  assert.equal(ok, { method: 'POST', url: '/v1/chat/completions?x=1', headers: { host: 'a', 'content-length': '12', authorization: 'Bearer k', connection: 'keep-alive' }, contentLength: 12, keepAlive: true });
  assert.is(parsePlainHead('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close')?.keepAlive, false);
  const refused = [
    'POST / HTTP/1.0\r\nHost: a\r\nContent-Length: 1',
    'POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1',
    'POST  / HTTP/1.1\r\nHost: a\r\nContent-Length: 1',
    'POST / HTTP/1.1\r\nContent-Length: 1',
    'POST / HTTP/1.1\r\nHost: a',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\ncontent-length: 1',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nExpect: 100-continue',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nUpgrade: websocket',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nConnection: upgrade',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n folded',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nX-A : b',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nX-A: b\nX-B: c',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nX-A: caf\xe9',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nX-A: b\x0b',
  ];
  for (const head of refused) assert.is(parsePlainHead(head), undefined, JSON.stringify(head));
});

test('a response header with a line break is refused, not written (no header injection)', async () => {
  const { DirectResponse } = await import('../../kernel/http/direct/response.js');
  const written: string[] = [];
  const line = { socket: { write: (t: string) => written.push(t) }, keepAliveSeconds: 65, closing: () => false, responded: () => {} };
  const res = new DirectResponse({ svcRequestId: 'req_1' } as never, line as never);
  assert.throws(() => res.writeHead(200, { 'x-a': 'b\r\nset-cookie: c=d' }), /Invalid character/);
  assert.throws(() => new DirectResponse({ svcRequestId: 'req_1' } as never, line as never).writeHead(200, ['bad name', 'x']), /valid HTTP token/);
  assert.equal(written, []);
});

/** A service of its own with `server` settings, its port, and a way to stop it. */
async function withServer(server: Record<string, unknown>, run: (port: number) => Promise<void>): Promise<void> {
  const backing = await createBacking();
  const own = await startService({ backing, overrides: { server, plugins: { probe: { module: probeModule } } } });
  try {
    await run(own.service.port);
  } finally {
    await own.stop();
    await backing.drop();
  }
}

/** Writes `text` on a new connection; resolves with what came back and how long until the server closed it. */
function untilClosed(port: number, text: string): Promise<{ text: string; ms: number }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const s = connect({ host: '127.0.0.1', port }, () => s.write(text));
    let got = '';
    s.setEncoding('latin1');
    s.on('data', (d: string) => (got += d));
    s.on('error', fail);
    s.on('close', () => done({ text: got, ms: performance.now() - started }));
  });
}

test('server.keepAliveTimeoutMs: an idle connection after a request is closed', async () => {
  await withServer({ keepAliveTimeoutMs: 300 }, async (port) => {
    const r = await untilClosed(port, post('/probe/echo-direct', '[]'));
    const [answer] = answers(r.text);
    assert.is(answer!.status, 200);
    assert.is(answer!.headers['keep-alive'], 'timeout=0');
    // Checked once a second: closed after 0.3 s idle, within the next check.
    assert.ok(r.ms >= 300 && r.ms < 5000, `${r.ms} ms`);
  });
});

test('server.requestTimeoutMs: a body that stops arriving is answered 408 in the error shape', async () => {
  await withServer({ requestTimeoutMs: 500, bodyMinBytesPerSecond: 0 }, async (port) => {
    const r = await untilClosed(port, `POST /probe/echo-direct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n[1,`);
    const [answer] = answers(r.text);
    assert.is(answer!.status, 408);
    assert.is(answer!.headers.connection, 'close');
    assert.equal(JSON.parse(answer!.body), { error: { message: 'The request did not arrive in time.', type: 'invalid_request_error', param: null, code: 'invalid_request' } });
    assert.ok(r.ms >= 500, `${r.ms} ms`);
  });
});

test('server.directHttp false: node:http reads every request', async () => {
  const backing = await createBacking();
  const off = await startService({ backing, overrides: { server: { directHttp: false }, plugins: { probe: { module: probeModule } } } });
  try {
    const res = await fetch(`${off.url}/probe/echo-direct`, { method: 'POST', body: '[]' });
    assert.is(res.status, 200);
    assert.equal(await res.json(), { kind: 'array' });
    assert.is((off.service as unknown as { http: { directServed: number } }).http.directServed, 0);
  } finally {
    await off.stop();
    await backing.drop();
  }
});

test.run();
