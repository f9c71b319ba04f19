import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Service } from '../../kernel/lifecycle/service.js';
import { MemorySink, shape, startService } from '../support/harness.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { startChatWorld, modelName, type ChatWorld } from '../chat/setup.js';
import { call } from '../identity/support.js';
import { adminEmail, adminPassword } from '../support/provision.js';
import { bundleFiles, unpack } from './unpack.js';

const test = suite(`diagnostics bundle (${shape})`);
let w: ChatWorld;
const canaries = {
  providerKey: 'sk-upstream-canary-7f3a',
  password: adminPassword,
  prompt: 'canary-diag-prompt-55aa',
  reply: 'canary-diag-reply-66bb',
  toolArgs: 'canary-diag-toolarg-77cc',
  email: adminEmail,
  personEmail: 'canary.person@diag.example',
  personName: 'Canary Personname',
  otlpHeader: 'canary-otlp-header-88dd',
};

test.before(async () => {
  w = await startChatWorld({ plugins: { retention: { config: { schedule: '' } } } }, {});
  await call(w.svc.url, 'PUT', `/workspaces/${w.workspaceId}/recording`, { auth: w.admin.token, body: { enabled: true } });
  await w.admin.ok('POST', '/persons', { email: canaries.personEmail, name: canaries.personName, password: 'a long canary password' });
  w.mock.enqueue({ chunks: [canaries.reply] });
  await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: canaries.prompt }] });
  w.mock.enqueue({ reply: { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: canaries.toolArgs }) } }], finish_reason: 'tool_calls' } });
  await w.client.chat.completions.create({
    model: modelName,
    messages: [{ role: 'user', content: canaries.prompt }],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  });
  // A failed request for the last day's failures by code.
  await w.client.chat.completions.create({ model: 'nobody:nothing', messages: [{ role: 'user', content: canaries.prompt }] }).catch(() => {});
  await new Promise((r) => setTimeout(r, 1500)); // usage records and recordings are written behind the response
});
test.after(async () => {
  await w?.stop();
});

function json(files: Map<string, string>, name: string): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return JSON.parse(files.get(name)!) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function noCanaries(files: Map<string, string>, extra: string[] = []): void {
  const all = [...files.values()].join('\n');
  for (const [what, value] of Object.entries(canaries)) assert.not.ok(all.includes(value), `bundle holds the ${what}`);
  for (const value of extra) assert.not.ok(all.toLowerCase().includes(value.toLowerCase()), `bundle holds ${value}`);
  assert.not.ok(/@[a-z0-9-]+\.(example|test)/i.test(all), 'no e-mail address');
}

test('instance admins download the bundle; every listed part is there; no canary is', async () => {
  const denied = await fetch(`${w.svc.url}/admin/v1/diagnostics`);
  assert.is(denied.status, 401);
  const res = await fetch(`${w.svc.url}/admin/v1/diagnostics`, { headers: { authorization: `Bearer ${w.admin.token}` } });
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/gzip');
  assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="svc-diagnostics-.*\.tar\.gz"/);
  const files = await unpack(Buffer.from(await res.arrayBuffer()));
  assert.equal([...files.keys()].sort(), bundleFiles);
  const mockAddress = new URL(w.mock.url).host;
  noCanaries(files, [mockAddress, w.apiKey]);

  assert.is(json(files, 'versions.json').node, process.version);
  assert.is(json(files, 'health.json').status, 'ok');
  assert.is(json(files, 'health.json').checks.database.status, 'ok');
  // Written by their owners when they run: the sandbox client and the catalogue feed.
  assert.equal(json(files, 'sandbox.json'), { sandbox: { state: 'not_configured' }, egress_proxy: { state: 'not_configured' } });
  assert.is(json(files, 'price-updates.json').on, false);
  const settings = json(files, 'settings.json');
  assert.is(settings.database.url, shape === 'scale-out' ? 'set' : 'not set');
  assert.is(settings.environment.SVC_ADMIN_PASSWORD, 'set');
  assert.equal(json(files, 'recovery-keys.json').versions_given, ['v1']);
  assert.is(json(files, 'recovery-keys.json').in_use, 'v1');
  const db = json(files, 'database.json');
  assert.is(db.dialect, shape === 'scale-out' ? 'postgresql' : 'sqlite');
  assert.ok(db.size_bytes > 0 && db.version.length > 0);
  assert.is(json(files, 'cache.json').kind, shape === 'scale-out' ? 'redis' : 'memory');
  const counts = json(files, 'counts.json');
  assert.ok(counts.persons.active >= 2);
  assert.is(counts.providers, 1);
  assert.is(counts.recordings, 3); // the refused request's prompt is recorded too
  assert.is(counts.recording_workspaces.on, 1);
  const jobs = json(files, 'jobs.json').jobs;
  assert.is(jobs[0].name, 'retention');
  assert.ok(json(files, 'plugins.json').order.includes('diagnostics'));
  const failed = json(files, 'failed-requests.json').by_code;
  assert.ok(failed.some((f: { status: number; code: string; count: number }) => f.code === 'provider_not_configured' && f.status === 422 && f.count === 1));
  assert.equal(json(files, 'manifest.json').unavailable, []);
});

test('svc diagnostics writes the same bundle to standard output', async () => {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await commandService(w.backing.dataDir, w.backing.databaseUrl, w.backing.redisUrl, w.backing.redisPrefix).runCommand(['diagnostics'], out);
  const files = await unpack(Buffer.concat(chunks));
  assert.equal([...files.keys()].sort(), bundleFiles);
  noCanaries(files, [new URL(w.mock.url).host]);
  assert.is(json(files, 'counts.json').providers, 1);
});

test('with the database down the bundle is still written; the parts it cannot read say why', async () => {
  let dataDir = w.backing.dataDir;
  let databaseUrl = w.backing.databaseUrl;
  let proxy: TcpProxy | undefined;
  if (databaseUrl) {
    // PostgreSQL behind a relay that is then cut: the database is unreachable.
    proxy = new TcpProxy(5432);
    const url = new URL(databaseUrl);
    url.port = String(await proxy.start());
    databaseUrl = url.toString();
    await proxy.cut();
  } else {
    // The SQLite folder cannot be opened: the data folder is a plain file.
    dataDir = join(w.backing.dataDir, 'not-a-folder');
    writeFileSync(dataDir, 'x');
  }
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await commandService(dataDir, databaseUrl, w.backing.redisUrl, w.backing.redisPrefix).runCommand(['diagnostics'], out);
  const files = await unpack(Buffer.concat(chunks));
  assert.equal([...files.keys()].sort(), bundleFiles);
  noCanaries(files);
  for (const name of ['database.json', 'counts.json', 'failed-requests.json', 'jobs.json']) assert.match(json(files, name).unavailable, /^database unreachable \(/);
  assert.is(json(files, 'health.json').status, 'down');
  assert.is(json(files, 'health.json').checks.database.status, 'down');
  assert.equal(json(files, 'sandbox.json').sandbox.configured, false);
  assert.ok(json(files, 'plugins.json').order.includes('retention'));
  assert.is(json(files, 'settings.json').log_level, 'debug');
  assert.equal(json(files, 'manifest.json').unavailable, ['counts.json', 'database.json', 'failed-requests.json', 'jobs.json']);
});

test('a running service whose database goes away still serves the bundle to a signed-in admin', async () => {
  if (!w.backing.databaseUrl) return; // SQLite is a file opened at start: it cannot become unreachable while running.
  const proxy = new TcpProxy(5432);
  const url = new URL(w.backing.databaseUrl);
  url.port = String(await proxy.start());
  const svc = await startService({ backing: { ...w.backing, databaseUrl: url.toString() }, env: {} });
  try {
    const token = (await call(svc.url, 'POST', '/sessions', { body: { email: adminEmail, password: adminPassword } })).body.token as string;
    await proxy.cut();
    const res = await fetch(`${svc.url}/admin/v1/diagnostics`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(res.status, 200);
    const files = await unpack(Buffer.from(await res.arrayBuffer()));
    assert.equal([...files.keys()].sort(), bundleFiles);
    noCanaries(files);
    assert.match(json(files, 'database.json').unavailable, /^database unreachable \(/);
    assert.is(json(files, 'health.json').checks.database.status, 'down');
    assert.equal(json(files, 'manifest.json').unavailable, ['counts.json', 'database.json', 'failed-requests.json']);
    assert.match(json(files, 'jobs.json').jobs[0].last_run.unavailable, /^last run unreadable \(/);
  } finally {
    await svc.stop();
  }
});

function commandService(dataDir: string, databaseUrl?: string, redisUrl?: string, prefix?: string): Service {
  return new Service({
    env: databaseUrl ? { SVC_RECOVERY_KEYS: `v1:${Buffer.alloc(32, 7).toString('base64')}` } : {},
    logSink: new MemorySink(),
    overrides: {
      server: { host: '127.0.0.1', port: 0 },
      log: { level: 'debug' },
      dataDir,
      database: databaseUrl ? { url: databaseUrl } : {},
      cache: redisUrl ? { url: redisUrl, prefix } : {},
      plugins: { diagnostics: { config: { partTimeoutMs: 3000 } } },
    },
  });
}

test.run();
