import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { request } from 'node:http';
import type { Server } from 'node:http';
import { shape } from '../support/harness.js';
import { helloServer, startServiceProcess, type ServiceProcess } from '../support/sandbox-services.js';

const test = suite(`egress proxy (${shape})`);
const secret = 'egress-test-secret-0123456789';
let egress: ServiceProcess;
let allowed: { server: Server; port: number };
let privateNotAllowed: { server: Server; port: number };

/** Sends `CONNECT host:port` and, when tunnelled, one GET; the proxy's status and the reply. */
function tunnel(host: string, port: number): Promise<{ status: number; head: string; body: string }> {
  return new Promise((done, fail) => {
    const s = connect({ host: '127.0.0.1', port: egress.port });
    let text = '';
    let sent = false;
    s.on('data', (b) => {
      text += b.toString();
      if (!sent && text.startsWith('HTTP/1.1 200') && text.includes('\r\n\r\n')) {
        sent = true;
        s.write(`GET / HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
      }
    });
    s.on('error', fail);
    s.on('close', () => done({ status: Number(text.slice(9, 12)), head: text.slice(0, text.indexOf('\r\n\r\n')), body: text.slice(text.lastIndexOf('\r\n\r\n') + 4) }));
    s.write(`CONNECT ${host}:${port} HTTP/1.1\r\nhost: ${host}:${port}\r\n\r\n`);
  });
}

function forward(url: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const r = request({ host: '127.0.0.1', port: egress.port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (t: string) => (body += t)).on('end', () => done({ status: res.statusCode ?? 0, body }));
    });
    r.on('error', fail);
    r.end();
  });
}

const refusals = (): Array<Record<string, unknown>> => egress.logs.filter((l) => l.event === 'egress.refused');

test.before(async () => {
  allowed = await helloServer();
  privateNotAllowed = await helloServer();
  egress = await startServiceProcess('egress', {
    SVC_EGRESS_HOST: '127.0.0.1', SVC_EGRESS_PORT: '0', SVC_EGRESS_SECRET: secret,
    SVC_EGRESS_ALLOW: `localhost:${allowed.port}!private,localhost:${privateNotAllowed.port}`,
  });
});
test.after(async () => {
  await egress.stop();
  allowed.server.close();
  privateNotAllowed.server.close();
});

test('health endpoint answers without a secret', async () => {
  const res = await fetch(`${egress.url}/healthz`);
  assert.is(res.status, 200);
  assert.equal(await res.json(), { status: 'ok', allowed: 2 });
});

test('an allowed host:port is tunnelled (CONNECT) and forwarded (absolute URL)', async () => {
  const t = await tunnel('localhost', allowed.port);
  assert.is(t.status, 200);
  assert.is(t.body, 'hello');
  const f = await forward(`http://localhost:${allowed.port}/x`);
  assert.equal(f, { status: 200, body: 'hello' });
  assert.is(refusals().length, 0);
});

test('a destination not on the list is refused with 403 and logged with host, port, reason', async () => {
  const t = await tunnel('127.0.0.1', allowed.port);
  assert.is(t.status, 403);
  assert.equal(JSON.parse(t.body), { error: { code: 'egress_refused', reason: 'not_allowed' } });
  const f = await forward(`http://example.invalid:${allowed.port}/`);
  assert.is(f.status, 403);
  const logged = refusals().slice(-2).map((l) => [l.host, l.port, l.reason, l.level]);
  assert.equal(logged, [['127.0.0.1', allowed.port, 'not_allowed', 'warn'], ['example.invalid', allowed.port, 'not_allowed', 'warn']]);
});

test('a listed name that resolves to loopback is refused unless allowed as private', async () => {
  const t = await tunnel('localhost', privateNotAllowed.port);
  assert.is(t.status, 403);
  assert.equal(JSON.parse(t.body), { error: { code: 'egress_refused', reason: 'private_address' } });
  const f = await forward(`http://localhost:${privateNotAllowed.port}/`);
  assert.is(f.status, 403);
  assert.equal(JSON.parse(f.body), { error: { code: 'egress_refused', reason: 'private_address' } });
  assert.equal(refusals().at(-1), { ...refusals().at(-1), host: 'localhost', port: privateNotAllowed.port, reason: 'private_address' });
});

test('the allow-list is replaced only with the shared secret', async () => {
  const body = JSON.stringify([{ host: '127.0.0.1', port: privateNotAllowed.port, allowPrivate: true }]);
  const put = (auth: string, b = body) => fetch(`${egress.url}/v1/allow-list`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/json' }, body: b });
  assert.is((await put('Bearer wrong-secret')).status, 401);
  assert.is((await tunnel('127.0.0.1', privateNotAllowed.port)).status, 403);
  assert.is((await put(`Bearer ${secret}`, '[{"host":"x"}]')).status, 400);
  const ok = await put(`Bearer ${secret}`);
  assert.is(ok.status, 200);
  assert.equal(await ok.json(), { allowed: 1 });
  const t = await tunnel('127.0.0.1', privateNotAllowed.port);
  assert.is(t.status, 200);
  assert.is(t.body, 'hello');
  // The old list is gone as a whole.
  assert.is((await tunnel('localhost', allowed.port)).status, 403);
});

test.run();
