import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import dc from 'node:diagnostics_channel';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONNECT_TIMEOUT, readUpstreamText, transportFailureOf, UpstreamPool } from '../../kernel/index.js';

const test = suite('kernel: upstream pool (keep-alive connections to a provider)');

interface Upstream {
  url: URL;
  connections: number;
  /** Requests that arrived, in order: method, path, headers and body. */
  seen: { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }[];
  /** How the next requests are answered (default: 200 with a small JSON body). */
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  close(): Promise<void>;
}

async function upstream(): Promise<Upstream> {
  const state: Upstream = {
    url: new URL('http://127.0.0.1'),
    connections: 0,
    seen: [],
    answer: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    close: async () => undefined,
  };
  const server = http.createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    state.seen.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(parts).toString() });
    state.answer(req, res);
  });
  server.on('connection', () => state.connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`);
  state.close = () => new Promise((done) => server.close(() => done()).closeAllConnections());
  return state;
}

test('a body given as text is sent with its length in bytes; a Host given by the caller is not sent twice', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const body = '{"q":"größe – 大きさ"}';
    const res = await pool.request({ path: '/v1/x', method: 'POST', headers: { Host: 'elsewhere.example' }, body });
    await readUpstreamText(res.body, 1024);
    assert.is(up.seen[0]!.body, body);
    assert.is(up.seen[0]!.headers['content-length'], String(Buffer.byteLength(body)));
    assert.is(up.seen[0]!.headers.host, up.url.host);
    const get = await pool.request({ path: '/v1/models', method: 'GET' });
    await readUpstreamText(get.body, 1024);
    assert.is(up.seen[1]!.headers['content-length'], undefined, 'a GET without a body has no length');
    assert.is(up.seen[1]!.headers['transfer-encoding'], undefined);
  } finally {
    await pool.close();
    await up.close();
  }
});

test('sends method, path, headers and body; reuses one keep-alive connection for calls in a row', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 8, connectTimeout: 1000 });
  try {
    for (let i = 0; i < 5; i++) {
      const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: `{"n":${i}}` });
      assert.is(res.statusCode, 200);
      assert.is(res.headers['content-type'], 'application/json');
      assert.is(await readUpstreamText(res.body, 1024), '{"ok":true}');
    }
    assert.is(up.seen.length, 5);
    assert.equal(up.seen[4], { method: 'POST', path: '/v1/chat/completions', headers: up.seen[4]!.headers, body: '{"n":4}' });
    assert.is(up.seen[4]!.headers.authorization, 'Bearer k');
    // The whole body is known: sent with its length, not chunked (some vendors refuse chunked bodies).
    assert.is(up.seen[4]!.headers['content-length'], '7');
    assert.is(up.seen[4]!.headers['transfer-encoding'], undefined);
    assert.is(up.seen[4]!.headers.host, up.url.host, 'Host names the origin, port included');
    assert.is(up.connections, 1, 'calls in a row share one connection');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('diagnostics channels: a call is published as its request is sent and as the head of its answer is read (timeline probe)', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  const seen: string[] = [];
  const sent = (): number => seen.push('sent');
  const head = (): number => seen.push('head');
  dc.subscribe('svc.upstream.request.sent', sent);
  dc.subscribe('svc.upstream.response.head', head);
  try {
    for (let i = 0; i < 2; i++) {
      const res = await pool.request({ path: '/v1/x', method: 'POST', body: '{}' });
      seen.push('answered');
      await readUpstreamText(res.body, 1024);
    }
    assert.equal(seen, ['sent', 'head', 'answered', 'sent', 'head', 'answered']);
  } finally {
    dc.unsubscribe('svc.upstream.request.sent', sent);
    dc.unsubscribe('svc.upstream.response.head', head);
    await pool.close();
    await up.close();
  }
});

test('never opens more than `connections` at once: further calls wait for a free one', async () => {
  const up = await upstream();
  up.answer = (_req, res) => setTimeout(() => res.writeHead(200).end('x'), 30);
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const calls = Array.from({ length: 6 }, () => pool.request({ path: '/v1/models', method: 'GET' }).then((r) => readUpstreamText(r.body, 10)));
    assert.equal(await Promise.all(calls), ['x', 'x', 'x', 'x', 'x', 'x']);
    assert.is(up.connections, 2);
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('an aborted signal ends the call: before the answer the request rejects, after it the body fails', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    up.answer = () => undefined; // never answers
    const controller = new AbortController();
    const pending = pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}', signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client left')), 50);
    const err = await pending.then(() => undefined, (e: unknown) => e as Error);
    assert.ok(err, 'the call rejected');
    assert.is(err!.name, 'AbortError');

    up.answer = (_req, res) => res.writeHead(200).write('partial'); // headers and some body, then silence
    const late = new AbortController();
    const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}', signal: late.signal });
    const reading = readUpstreamText(res.body, 1024).then(() => 'read', () => 'failed');
    late.abort(new Error('client left'));
    assert.is(await reading, 'failed', 'the body does not end as if it were whole');

    assert.is(await pool.request({ path: '/v1/models', method: 'GET', signal: AbortSignal.abort(new Error('gone')) }).catch((e: Error) => e.message), 'gone', 'an already aborted signal sends nothing');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('transport failures sort as the spec needs: refused → connect, closed before answering → reset', async () => {
  const closed = net.createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((done) => closed.close(done));
  const refused = new UpstreamPool(new URL(`http://127.0.0.1:${port}`), { connections: 2, connectTimeout: 1000 });
  assert.is(transportFailureOf(await refused.request({ path: '/', method: 'GET' }).catch((e: unknown) => e)), 'connect');
  await refused.destroy();

  const up = await upstream();
  up.answer = (req) => req.socket.destroy();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const err = await pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}' }).catch((e: unknown) => e);
    assert.is(transportFailureOf(err), 'reset');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a connection that cannot be established within connectTimeout fails as a timeout', async () => {
  // A listener that never accepts, its queue filled: the kernel drops further SYNs, so connecting hangs.
  const child: ChildProcess = spawn('python3', ['-c', 'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const port = Number(line.toString().trim());
    const fillers: net.Socket[] = [];
    for (let i = 0; i < 3; i++) fillers.push(net.connect(port, '127.0.0.1').on('error', () => undefined));
    await new Promise((r) => setTimeout(r, 100));
    const pool = new UpstreamPool(new URL(`http://127.0.0.1:${port}`), { connections: 2, connectTimeout: 200 });
    const started = Date.now();
    const err = (await pool.request({ path: '/', method: 'GET' }).catch((e: unknown) => e)) as { code?: string };
    assert.is(err.code, CONNECT_TIMEOUT);
    assert.is(transportFailureOf(err), 'timeout');
    assert.ok(Date.now() - started < 5000, 'failed at the connect deadline, not the system one');
    for (const s of fillers) s.destroy();
    await pool.destroy();
  } finally {
    child.kill('SIGKILL');
  }
});

test('an https origin that accepts TCP but never answers the TLS handshake fails as a timeout', async () => {
  // Accepts the connection and reads the ClientHello, never replies: the deadline must cover the handshake.
  const silent = net.createServer((socket) => socket.on('data', () => undefined));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const port = (silent.address() as net.AddressInfo).port;
  const pool = new UpstreamPool(new URL(`https://127.0.0.1:${port}`), { connections: 2, connectTimeout: 200 });
  try {
    // Without a deadline over the handshake the call would wait forever: fail the test instead.
    let guard: NodeJS.Timeout | undefined;
    const hung = new Promise<{ code: string }>((resolve) => (guard = setTimeout(() => resolve({ code: 'still waiting after 5 s' }), 5000)));
    const err = (await Promise.race([pool.request({ path: '/', method: 'GET' }).catch((e: unknown) => e), hung])) as { code?: string };
    clearTimeout(guard);
    assert.is(err.code, CONNECT_TIMEOUT);
    assert.is(transportFailureOf(err), 'timeout');
  } finally {
    await pool.destroy();
    await new Promise((done) => silent.close(done));
  }
});

test('close() lets calls in flight finish, then refuses new ones', async () => {
  const up = await upstream();
  up.answer = (_req, res) => setTimeout(() => res.writeHead(200).end('done'), 80);
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const inFlight = pool.request({ path: '/v1/models', method: 'GET' }).then((r) => readUpstreamText(r.body, 10));
    await new Promise((r) => setTimeout(r, 10));
    const closing = pool.close();
    assert.is(await inFlight, 'done');
    await closing;
    const err = (await pool.request({ path: '/v1/models', method: 'GET' }).catch((e: unknown) => e)) as { code?: string };
    assert.is(err.code, 'UPSTREAM_CLOSED');
  } finally {
    await up.close();
  }
});

test('a chunked reply reads whole; one that breaks off fails its body; one with no length runs to the close', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    up.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: [DONE]\n\n'), 20);
    };
    const whole = await pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}' });
    assert.is(whole.headers['transfer-encoding'], 'chunked');
    assert.is(await readUpstreamText(whole.body, 1024), 'data: one\n\ndata: [DONE]\n\n');

    up.answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      setTimeout(() => res.socket!.destroy(), 20);
    };
    const broken = await pool.request({ path: '/v1/chat/completions', method: 'POST', body: '{}' });
    const got: string[] = [];
    const err = await (async () => {
      for await (const piece of broken.body) got.push(String(piece));
    })().then(() => undefined, (e: { code?: string }) => e);
    assert.equal(got, ['data: one\n\n'], 'what arrived before the break is read');
    assert.is(err?.code, 'ECONNRESET', 'the break is an error, not an end');
    assert.is(transportFailureOf(err), 'reset');

    up.answer = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
      res.end('to the close');
      req.socket.end();
    };
    const before = up.connections;
    const closing = await pool.request({ path: '/v1/models', method: 'GET' });
    assert.is(await readUpstreamText(closing.body, 1024), 'to the close');
    up.answer = (_req, res) => res.writeHead(200).end('next');
    assert.is(await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 1024), 'next');
    // One new connection for the reply marked close (the broken one was gone), another after it.
    assert.is(up.connections, before + 2, 'a reply marked Connection: close is not followed on the same connection');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a stream body is sent with its given length, or chunked when it has none', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const parts = ['{"a":', '"', 'x'.repeat(200_000), '"}'];
    const length = parts.reduce((n, p) => n + p.length, 0);
    const sized = await pool.request({ path: '/v1/x', method: 'POST', headers: { 'content-length': String(length) }, body: Readable.from(parts.map((p) => Buffer.from(p))) });
    await readUpstreamText(sized.body, 1024);
    assert.is(up.seen[0]!.body.length, length);
    assert.is(up.seen[0]!.headers['content-length'], String(length));
    const chunked = await pool.request({ path: '/v1/x', method: 'POST', body: Readable.from(parts.map((p) => Buffer.from(p))) });
    await readUpstreamText(chunked.body, 1024);
    assert.is(up.seen[1]!.body, parts.join(''));
    assert.is(up.seen[1]!.headers['transfer-encoding'], 'chunked');
    assert.is(up.connections, 1, 'both on one connection');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a body read late: its bytes wait (the socket paused past the high-water mark) and arrive whole, as text or as a stream', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 1, connectTimeout: 1000 });
  try {
    const big = 'abcdefgh'.repeat(128 * 1024); // 1 MiB, far past a Readable's high-water mark
    up.answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big);
    const asText = await pool.request({ path: '/v1/models', method: 'GET' });
    await new Promise((r) => setTimeout(r, 100));
    assert.is(await readUpstreamText(asText.body, 2 * 1024 * 1024), big);
    const asStream = await pool.request({ path: '/v1/models', method: 'GET' });
    await new Promise((r) => setTimeout(r, 100));
    let got = '';
    for await (const piece of asStream.body) got += String(piece);
    assert.is(got, big);
    assert.is(up.connections, 1, 'both whole replies left the connection reusable');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a body collected as text that breaks off rejects, and the pool goes on', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 1, connectTimeout: 1000 });
  try {
    up.answer = (_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('only part');
      setTimeout(() => res.socket?.destroy(), 50);
    };
    const res = await pool.request({ path: '/v1/models', method: 'GET' });
    const err = await readUpstreamText(res.body, 4096).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    assert.ok(err, 'a reply cut short is not read as whole');
    assert.is(err!.code, 'ECONNRESET');
    up.answer = (_req, r) => r.writeHead(200).end('ok');
    assert.is(await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 10), 'ok');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a body dropped before its end drops the connection; idle connections close after keepAliveTimeout', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000, keepAliveTimeout: 300 });
  try {
    up.answer = (_req, res) => res.writeHead(200).end('y'.repeat(100_000));
    const big = await pool.request({ path: '/v1/models', method: 'GET' });
    assert.is((await readUpstreamText(big.body, 10)).length <= 100_000, true);
    up.answer = (_req, res) => res.writeHead(200).end('ok');
    assert.is(await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 10), 'ok');
    assert.is(up.connections, 2, 'the cut-short reply’s connection was not reused');
    await new Promise((r) => setTimeout(r, 900));
    assert.is(await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 10), 'ok');
    assert.is(up.connections, 3, 'the idle connection had been closed');
    // A server that says it keeps idle connections 1 s: given up a second before, so not reused at all.
    up.answer = (_req, res) => res.writeHead(200, { 'keep-alive': 'timeout=1' }).end('ok');
    for (let i = 0; i < 2; i++) await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 10);
    assert.is(up.connections, 4, 'the first reply came on the kept connection; its hint then retired it');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('a header value or path that would split the request is refused before anything is sent', async () => {
  const up = await upstream();
  const pool = new UpstreamPool(up.url, { connections: 2, connectTimeout: 1000 });
  try {
    const bad = await pool.request({ path: '/v1/x', method: 'GET', headers: { authorization: 'Bearer k\r\nx-injected: 1' } }).catch((e: { code?: string }) => e);
    assert.is((bad as { code?: string }).code, 'ERR_INVALID_CHAR');
    const path = await pool.request({ path: '/v1/x y', method: 'GET' }).catch((e: { code?: string }) => e);
    assert.is((path as { code?: string }).code, 'ERR_UNESCAPED_CHARACTERS');
    assert.is(up.seen.length, 0);
    assert.is(await readUpstreamText((await pool.request({ path: '/v1/models', method: 'GET' })).body, 20), '{"ok":true}', 'the pool still works');
  } finally {
    await pool.destroy();
    await up.close();
  }
});

test('an https origin: the certificate is checked against the host name, and the connection is kept', async () => {
  const tlsDir = new URL('../../../test/support/tls/', import.meta.url);
  const cert = readFileSync(new URL('localhost.crt', tlsDir));
  const server = https.createServer({ cert, key: readFileSync(new URL('localhost.key', tlsDir)) }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"path":"${req.url}"}`));
  });
  let connections = 0;
  server.on('secureConnection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const trusted = new UpstreamPool(new URL(`https://localhost:${port}/v1`), { connections: 2, connectTimeout: 2000, ca: cert });
  const untrusted = new UpstreamPool(new URL(`https://localhost:${port}`), { connections: 2, connectTimeout: 2000 });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await trusted.request({ path: `/v1/chat/${i}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.is(res.statusCode, 200);
      assert.is(await readUpstreamText(res.body, 1024), `{"path":"/v1/chat/${i}"}`);
    }
    assert.is(connections, 1, 'one TLS connection for calls in a row');
    const err = (await untrusted.request({ path: '/', method: 'GET' }).catch((e: unknown) => e)) as { code?: string };
    assert.is(err.code, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'a certificate nobody vouches for is refused');
  } finally {
    await trusted.destroy();
    await untrusted.destroy();
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

test('a reply that ends its connection frees the pool place at once, even when the server leaves the socket open', async () => {
  // A raw server that says Connection: close and then keeps the socket open: the pool must not wait for it.
  let accepted = 0;
  const raw = net.createServer((socket) => {
    accepted++;
    socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok'));
  });
  raw.listen(0, '127.0.0.1');
  await once(raw, 'listening');
  const pool = new UpstreamPool(new URL(`http://127.0.0.1:${(raw.address() as net.AddressInfo).port}`), { connections: 1, connectTimeout: 1000 });
  try {
    let guard: NodeJS.Timeout | undefined;
    const stuck = new Promise<string>((resolve) => (guard = setTimeout(() => resolve('still waiting for a free connection'), 3000)));
    const calls = (async () => {
      const out: string[] = [];
      for (let i = 0; i < 3; i++) out.push(await readUpstreamText((await pool.request({ path: '/', method: 'GET' })).body, 10));
      return out.join(',');
    })();
    assert.is(await Promise.race([calls, stuck]), 'ok,ok,ok');
    clearTimeout(guard);
    assert.is(accepted, 3, 'one connection a call');
  } finally {
    await pool.destroy();
    await new Promise((done) => raw.close(done));
  }
});

test.run();
