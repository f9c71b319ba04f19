import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BodyReader } from '../../kernel/http/body.js';
import { isGatewayError } from '../../kernel/errors/gateway-error.js';

/**
 * The body reader on a real node server, both ways a body is read: still arriving (shared
 * listeners) and already whole when the route asks (one read), with the in-flight total given
 * back when the response closes.
 */
const test = suite('kernel: body reader (arriving and already whole)');

const limits = { maxBytes: 1000, inFlightBytes: 10_000, minBytesPerSecond: 0, rateWindowMs: 1000 };

async function serve(reader: BodyReader, waitMs: number): Promise<{ url: URL; close: () => Promise<void>; seen: Array<{ complete: boolean; body?: string; code?: string }> }> {
  const seen: Array<{ complete: boolean; body?: string; code?: string }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    setTimeout(async () => {
      const complete = req.complete;
      try {
        const body = await reader.read(req, res);
        seen.push({ complete, body: body.toString() });
        res.end('ok');
      } catch (err) {
        seen.push({ complete, code: isGatewayError(err) ? err.code : String(err) });
        res.statusCode = 413;
        res.end();
      }
    }, waitMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/`), seen, close: () => new Promise((r) => server.close(() => r())) };
}

function post(url: URL, body: string, chunked: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

for (const waitMs of [0, 50]) {
  const way = waitMs === 0 ? 'read at once' : 'read after the route waited';
  test(`${way}: the body whole, in-flight bytes given back; over the limit refused (request_too_large)`, async () => {
    const reader = new BodyReader(limits);
    const s = await serve(reader, waitMs);
    try {
      assert.is(await post(s.url, '{"a":1}', false), 200);
      assert.is(await post(s.url, 'x'.repeat(700), true), 200);
      assert.is(await post(s.url, 'y'.repeat(1500), true), 413);
      assert.equal(s.seen.map((x) => x.body ?? x.code), ['{"a":1}', 'x'.repeat(700), 'request_too_large']);
      if (waitMs > 0) assert.ok(s.seen.every((x) => x.complete), 'the bodies were whole before they were read');
      await new Promise((r) => setTimeout(r, 20));
      assert.is(reader.heldBytes, 0);
    } finally {
      await s.close();
    }
  });
}

test.run();
