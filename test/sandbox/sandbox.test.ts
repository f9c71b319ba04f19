import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { shape } from '../support/harness.js';
import { helloServer, startServiceProcess, supportDir, type ServiceProcess } from '../support/sandbox-services.js';
import { client, probe, sandboxSecret } from './sandbox-probe.js';

const test = suite(`sandbox (${shape})`);
let egress: ServiceProcess;
let sandbox: ServiceProcess;
let target: { server: Server; port: number };
let hostDir: string;

test.before(async () => {
  target = await helloServer();
  hostDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-host-'));
  chmodSync(hostDir, 0o755); // the slots' own users must reach their folders under it
  writeFileSync(join(hostDir, 'secret.txt'), 'host secret');
  egress = await startServiceProcess('egress', { SVC_EGRESS_HOST: '127.0.0.1', SVC_EGRESS_PORT: '0', SVC_EGRESS_ALLOW: `127.0.0.1:${target.port}!private,localhost:${target.port}` });
  sandbox = await startServiceProcess('sandbox', {
    SVC_SANDBOX_HOST: '127.0.0.1', SVC_SANDBOX_PORT: '0', SVC_SANDBOX_SECRET: sandboxSecret, SVC_SANDBOX_SLOTS: '2',
    SVC_SANDBOX_WORK_DIR: join(hostDir, 'work'), SVC_SANDBOX_READ_ONLY: supportDir, SVC_SANDBOX_EGRESS: `127.0.0.1:${egress.port}`,
    SVC_SANDBOX_MEMORY_MB: '192', SVC_SANDBOX_MAX_PROCESSES: '24', SVC_SANDBOX_CALL_TIMEOUT_MS: '4000',
  });
});
test.after(async () => {
  await sandbox.stop();
  await egress.stop();
  target.server.close();
  rmSync(hostDir, { recursive: true, force: true });
});

test('started with its slots; health and reachability', async () => {
  assert.equal([sandbox.logs[0]!.event, sandbox.logs[0]!.slots], ['sandbox.started', 2]);
  const res = await fetch(`${sandbox.url}/healthz`);
  assert.is(res.status, 200);
  assert.equal(await res.json(), { status: 'ok', slots: 2, free: 2, quarantined: 0 });
  assert.equal(await client(sandbox.url, egress.url).reachability(), { sandbox: 'reachable', egress: 'reachable' });
  assert.equal(await client('http://127.0.0.1:1', '').reachability(), { sandbox: 'unreachable', egress: 'not_configured' });
});

test('a wrong secret is refused before anything starts', async () => {
  const c = client(sandbox.url, '', 'not-the-secret-0000000000');
  const s = c.open({ command: 'node', args: ['-e', '1'] });
  const started = await s.start().then(() => true, () => false);
  assert.is(started, false);
  assert.equal(await s.exited, { reason: 'unreachable', code: null });
});

test('a stdio tool server answers MCP messages through the protocol, as an unprivileged user in /scratch', async () => {
  const { results, exit } = await probe(client(sandbox.url), [['echo', { text: 'hi' }]]);
  assert.equal(results, [{ text: 'hi', uid: 65534, cwd: '/scratch' }]);
  assert.equal(exit, { reason: 'closed', code: null });
  const ended = await sandbox.waitFor('sandbox.call_ended');
  assert.equal([ended.command, ended.reason], ['node', 'closed']);
  assert.not.ok(JSON.stringify(sandbox.logs).includes('hi"'), 'no message reaches the log');
});

test('files: host files outside the view are invisible, only /scratch is writable, and it is wiped after the call', async () => {
  const owners: number[] = [];
  const { results } = await probe(client(sandbox.url), [
    ['read', { path: join(hostDir, 'secret.txt') }],
    ['read', { path: '/etc/passwd' }],
    ['write', { path: join(supportDir, 'planted.txt') }],
    ['write', { path: '/usr/planted.txt' }],
    ['write', { path: '/planted.txt' }],
    ['write', { path: '/run/svc/planted.txt' }],
    ['write', { path: '/scratch/mine.txt' }],
    ['read', { path: '/scratch/mine.txt' }],
  ], async (i) => {
    if (i !== 6) return;
    // On the host the file belongs to the slot's own unprivileged user, never to root.
    const file = [0, 1].map((n) => join(hostDir, 'work', `slot-${n}`, 'scratch', 'mine.txt')).find((f) => existsSync(f))!;
    owners.push(statSync(file).uid);
  });
  assert.ok(owners.length === 1 && (owners[0] === 61000 || owners[0] === 61001), `owner ${owners.join()}`);
  assert.equal(results, [{ error: 'ENOENT' }, { error: 'ENOENT' }, { error: 'EROFS' }, { error: 'EROFS' }, { error: 'EROFS' }, { error: 'EROFS' }, { written: true }, { content: 'x' }]);
  const next = await probe(client(sandbox.url), [['read', { path: '/scratch/mine.txt' }]]);
  assert.equal(next.results, [{ error: 'ENOENT' }]);
});

test('limits: processes are capped, memory and time end the call', async () => {
  const procs = await probe(client(sandbox.url), [['spawn', { n: 40 }]]);
  const started = (procs.results[0] as { started: number }).started;
  assert.ok(started > 0 && started < 24, `started ${started} processes`);
  const mem = await probe(client(sandbox.url), [['alloc', { mb: 400 }]]);
  assert.equal(mem, { results: [null], exit: { reason: 'memory_limit', code: null } });
  const time = await probe(client(sandbox.url), [['spin', {}]]);
  assert.equal(time, { results: [null], exit: { reason: 'time_limit', code: null } });
});

test('network: no direct connection anywhere; through the proxy only allowed destinations', async () => {
  const hostAddress = Object.values(networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4')?.address ?? '10.0.0.1';
  const { results } = await probe(client(sandbox.url), [
    ['connect', { host: '127.0.0.1', port: target.port }],
    ['connect', { host: hostAddress, port: target.port }],
    ['viaProxy', { host: '127.0.0.1', port: target.port }],
    ['viaProxy', { host: 'localhost', port: target.port }],
    ['viaProxy', { host: '127.0.0.1', port: egress.port }],
  ]);
  assert.equal(results[0], { error: 'ECONNREFUSED' }); // its own loopback, where nothing listens
  assert.equal(results[1], { error: 'ENETUNREACH' });
  assert.equal(results[2], { status: 200, body: 'hello' });
  assert.equal(results[3], { status: 403, body: JSON.stringify({ error: { code: 'egress_refused', reason: 'private_address' } }) });
  assert.equal((results[4] as { status: number }).status, 403);
  const refused = egress.logs.filter((l) => l.event === 'egress.refused').map((l) => [l.host, l.port, l.reason]);
  assert.equal(refused, [['localhost', target.port, 'private_address'], ['127.0.0.1', egress.port, 'not_allowed']]);
});

test.run();
