import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serviceForSuite, shape } from '../support/harness.js';

/**
 * Issue 9 item 7: what Node answers itself (431 headers too large, 400 bad request line) carries
 * a request id and a body in the spec's error shape.
 */
const test = suite(`http front: Node's own refusals in the error shape (${shape})`);
const service = serviceForSuite(test);

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `text` on a fresh connection and reads until the server closes it. */
function raw(text: string): Promise<Raw> {
  return new Promise((done, fail) => {
    const s = connect({ host: '127.0.0.1', port: service().service.port });
    const parts: Buffer[] = [];
    s.on('data', (d: Buffer) => parts.push(d));
    s.on('error', fail);
    s.on('close', () => {
      const all = Buffer.concat(parts).toString('utf8');
      const [head = '', body = ''] = all.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      done({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    s.write(text);
  });
}

function checkShape(r: Raw, status: number, message: string): void {
  assert.is(r.status, status);
  assert.match(r.headers['x-svc-request-id'] ?? '', /^req_/);
  assert.is(r.headers['x-request-id'], r.headers['x-svc-request-id']);
  assert.is(r.headers['content-type'], 'application/json');
  assert.is(r.headers.connection, 'close');
  assert.is(r.headers['x-should-retry'], 'false');
  assert.equal(JSON.parse(r.body), { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request' } });
}

test('headers over the limit: 431 with a request id and the error shape', async () => {
  const r = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  checkShape(r, 431, 'The request headers are too large.');
  assert.ok(service().logs.events('http.client_error').some((e) => e.status === 431 && e.code === 'HPE_HEADER_OVERFLOW'));
});

test('a bad request line: 400 with a request id and the error shape', async () => {
  checkShape(await raw('THIS IS NOT HTTP\r\n\r\n'), 400, 'The request is not valid HTTP.');
  checkShape(await raw('GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'), 400, 'The request is not valid HTTP.');
});

test('an ordinary 404 also carries x-request-id and x-should-retry', async () => {
  const res = await fetch(`${service().url}/nowhere`);
  assert.is(res.status, 404);
  assert.is(res.headers.get('x-request-id'), res.headers.get('x-svc-request-id'));
  assert.is(res.headers.get('x-should-retry'), 'false');
  assert.is(((await res.json()) as { error: { code: string } }).error.code, 'not_found');
});

test('a path parameter that is not valid percent-encoding: 400 in the error shape, before any sign-in', async () => {
  // The kernel checks the path before tinyhttp, which would decode the parameter itself and print
  // the URIError's stack (kernel/http/server.ts).
  const res = await fetch(`${service().url}/admin/v1/workspaces/%E0%A4%A/routes`);
  assert.is(res.status, 400);
  assert.match(res.headers.get('x-svc-request-id') ?? '', /^req_/);
  assert.is(res.headers.get('content-type'), 'application/json');
  assert.is(res.headers.get('x-should-retry'), 'false');
  assert.equal(await res.json(), { error: { message: 'The request path is not valid percent-encoding.', type: 'invalid_request_error', param: null, code: 'invalid_request' } });
});

test('the server still answers after them', async () => {
  const res = await fetch(`${service().url}/healthz`);
  assert.is(res.status, 200);
  await res.arrayBuffer();
});

test.run();
