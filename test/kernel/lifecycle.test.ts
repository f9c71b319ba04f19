import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { backingEnv, cleanEnv, freePort, pluginSource, startCli, tempDir, type Cli } from './fixtures/cli.js';

const test = suite(`lifecycle of the real CLI: graceful stop and log lines (${shape})`);
let backing: Backing;
let configPath: string;

test.before(async () => {
  backing = await createBacking();
  const slow = "ctx.route('GET', '/slow', async (rc) => { await new Promise((r) => setTimeout(r, 1500)); rc.json(200, { slow: true }); });";
  const dir = tempDir({ 'slow.mjs': pluginSource('slow', { register: slow }) });
  configPath = join(dir, 'svc.json');
  writeFileSync(configPath, JSON.stringify({ plugins: { slow: { module: './slow.mjs' } } }));
});
test.after(async () => {
  await backing.drop();
});

async function serve(extra: Record<string, string> = {}): Promise<{ cli: Cli; port: number }> {
  const port = await freePort();
  const cli = startCli(['serve'], cleanEnv({ ...backingEnv(backing), SVC_PORT: String(port), SVC_CONFIG: configPath, ...extra }));
  return { cli, port };
}

/** Every stdout line is one JSON object with time, level and event. */
function logLines(stdout: string): Array<Record<string, unknown>> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  return lines.map((line) => {
    const obj = JSON.parse(line) as Record<string, unknown>;
    assert.type(obj, 'object');
    assert.ok(!Number.isNaN(Date.parse(String(obj.time))) && String(obj.time).endsWith('Z'), `time in ${line}`);
    assert.ok(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].includes(String(obj.level)), `level in ${line}`);
    assert.match(String(obj.event), /^[a-z_]+\.[a-z_]+$/, `event in ${line}`);
    return obj;
  });
}

/** Opens a connection and sends a request line and one header, leaving the request unfinished. */
function halfRequest(port: number): Promise<Socket> {
  return new Promise((done, fail) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      done(s);
    });
    s.once('error', fail);
  });
}

function finishAndRead(s: Socket): Promise<string> {
  return new Promise((done, fail) => {
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    s.once('end', () => done(text));
    s.once('error', fail);
    s.write('\r\n');
  });
}

test('SIGTERM: the in-flight request finishes 200, a new one gets a plain 503, exit 0, stopping/stopped logged', async () => {
  const { cli, port } = await serve();
  const started = await cli.waitForEvent('api.started');
  assert.is(started.port, port);
  assert.is(started.shape, shape);
  assert.ok((started.plugins as string[]).includes('slow'));

  const waiting = await halfRequest(port);
  const slow = fetch(`http://127.0.0.1:${port}/slow`);
  await new Promise((r) => setTimeout(r, 300)); // the slow route is now running
  cli.child.kill('SIGTERM');
  const stopping = await cli.waitForEvent('api.stopping', 5000);
  assert.ok((stopping.in_flight as number) >= 1);

  const raw = await finishAndRead(waiting);
  const [head, body] = raw.split('\r\n\r\n') as [string, string];
  assert.match(head, /^HTTP\/1\.1 503 /);
  assert.match(head, /\r\ncontent-type: text\/plain/i);
  assert.match(head, /\r\nx-svc-request-id: req_/i);
  assert.not.match(body, /^\s*\{/, 'a plain 503, not the JSON error shape');

  const res = await slow;
  assert.is(res.status, 200);
  assert.equal(await res.json(), { slow: true });
  assert.is(await cli.exited(), 0);

  const events = logLines(cli.stdout());
  const names = events.map((e) => e.event);
  assert.ok(names.indexOf('api.started') < names.indexOf('api.stopping'));
  assert.ok(names.indexOf('api.stopping') < names.indexOf('api.stopped'));
  assert.is(events.find((e) => e.event === 'api.stopped')!.forced_streams, 0);
  assert.is(cli.stderr(), '');
  // Refused after the listener closed: no new connections.
  await fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => assert.unreachable('the port should be closed'),
    () => {},
  );
});

test('SIGINT stops it the same way, exit 0', async () => {
  const { cli } = await serve();
  await cli.waitForEvent('api.started');
  cli.child.kill('SIGINT');
  assert.is(await cli.exited(), 0);
  assert.ok(logLines(cli.stdout()).some((e) => e.event === 'api.stopped'));
});

test('SVC_LOG_LEVEL=info logs api.started (info) but not debug events', async () => {
  const { cli } = await serve({ SVC_LOG_LEVEL: 'info' });
  const started = await cli.waitForEvent('api.started');
  assert.is(started.level, 'info');
  assert.type(started.version, 'string');
  cli.child.kill('SIGTERM');
  assert.is(await cli.exited(), 0);
  assert.not.ok(logLines(cli.stdout()).some((e) => e.level === 'debug'), 'plugin.order is debug');
});

test('SVC_LOG_LEVEL=debug adds plugin.order; SIGTERM right then (start-up still running) stops cleanly', async () => {
  const { cli } = await serve({ SVC_LOG_LEVEL: 'debug' });
  const order = await cli.waitForEvent('plugin.order');
  assert.is(order.level, 'debug');
  assert.ok((order.plugins as string[]).includes('slow'));
  cli.child.kill('SIGTERM'); // plugin.order is logged before the store opens and migrations run
  assert.is(await cli.exited(), 0, cli.stderr());
  assert.is(cli.stderr(), '');
  const names = logLines(cli.stdout()).map((e) => e.event);
  assert.ok(names.includes('api.stopped'));
});

test('SVC_LOG_LEVEL=warn suppresses api.started and the info stop lines', async () => {
  const { cli, port } = await serve({ SVC_LOG_LEVEL: 'warn' });
  let up = false;
  for (let i = 0; i < 200 && !up; i++) {
    up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(up, `service came up; stderr: ${cli.stderr()}`);
  cli.child.kill('SIGTERM');
  assert.is(await cli.exited(), 0);
  const events = logLines(cli.stdout());
  assert.not.ok(events.some((e) => ['api.started', 'api.stopping', 'api.stopped'].includes(String(e.event))));
  assert.ok(events.every((e) => ['warn', 'error', 'fatal'].includes(String(e.level))));
});

test('SVC_LOG_LEVEL=silent writes nothing at all', async () => {
  const { cli, port } = await serve({ SVC_LOG_LEVEL: 'silent' });
  let up = false;
  for (let i = 0; i < 200 && !up; i++) {
    up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(up);
  cli.child.kill('SIGTERM');
  assert.is(await cli.exited(), 0);
  assert.is(cli.stdout(), '');
});

test.run();
