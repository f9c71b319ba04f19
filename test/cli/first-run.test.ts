import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createBacking, shape, testRecoveryKeys, type Backing } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { backingEnv, cleanEnv, cliPath, freePort, repoRoot, startCli, tempDir } from '../kernel/fixtures/cli.js';

// The README's first steps on a machine whose own node is older (issue 28 item 7): the wrapper
// scripts/svc.sh, the CLI's refusal of an old Node, the UI address in the start-up log, and a busy
// port that names SVC_PORT.
const test = suite(`first run: wrapper, old Node, UI address, busy port (${shape})`);
let backing: Backing;
/** The machine's own Node (Debian's, 20 here); the tests that need an old one skip when it is not. */
const systemNode = ['/usr/bin/node', '/bin/node'].find(existsSync);
const systemMajor = systemNode ? Number(spawnSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim()) : 0;
const oldNode = systemNode !== undefined && systemMajor > 0 && systemMajor < 22;

test.before(async () => {
  backing = await createBacking();
});
test.after(async () => {
  await backing.drop();
});

test('the CLI run by a Node older than 22.19 says so and names the wrapper (exit 1)', () => {
  if (!oldNode) return console.log(`  (skipped: the system node is ${systemMajor}, not older than 22)`);
  const r = spawnSync(systemNode!, [cliPath, 'admin', 'create-admin', '--email', 'a@example.test'], { cwd: repoRoot, env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, /^svc: needs Node 22\.19 or newer; this is Node 2\d\./);
  assert.match(r.stderr, /bash scripts\/svc\.sh admin create-admin --email a@example\.test/);
  assert.is(r.stdout, '');
});

test('bash scripts/svc.sh admin create-admin works with the old node first on PATH; the admin signs in', async () => {
  const dir = tempDir({ pw: 'a long admin password' });
  // The machine's old node first on PATH, as on a fresh Debian box; the wrapper finds Node 24.
  const path = oldNode ? `/usr/bin:/bin:${process.env.PATH}` : process.env.PATH!;
  const env = cleanEnv({ ...backingEnv(backing), PATH: path, SVC_LOG_LEVEL: 'silent' });
  const r = spawnSync('bash', [join(repoRoot, 'scripts/svc.sh'), 'admin', 'create-admin', '--email', 'first@example.test', '--password-file', 'pw'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^created instance admin per_/i);
  const port = await freePort();
  const cli = startCli(['serve'], cleanEnv({ ...backingEnv(backing), SVC_PORT: String(port) }));
  try {
    const ui = await cli.waitForEvent('api.admin_ui');
    assert.is(ui.url, `http://127.0.0.1:${port}/`);
    assert.is(ui.level, 'info');
    const page = await fetch(String(ui.url));
    assert.is(page.status, 200);
    const signIn = await fetch(`http://127.0.0.1:${port}/admin/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'first@example.test', password: 'a long admin password' }),
    });
    assert.is(signIn.status, 201);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited();
  }
});

test('the README\'s First steps block, run by bash as written (old node first on PATH), ends with a chat reply', async () => {
  // The block itself, from the README; only the addresses and the password file's folder differ.
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const block = /## First steps\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has a First steps block');
  assert.match(block!, /bash scripts\/svc\.sh admin create-admin/);
  const mock = await new MockUpstream().start();
  const port = await freePort();
  const dir = tempDir();
  const script = block!.replaceAll('localhost:8080', `127.0.0.1:${port}`).replaceAll('http://10.0.0.5:8000/v1', mock.url).replaceAll('/tmp/pw', join(dir, 'pw'));
  // A shared database needs the replicas' recovery keys to store the provider's key (README, Scaling out).
  const recovery: Record<string, string> = backing.databaseUrl ? { SVC_RECOVERY_KEYS: testRecoveryKeys } : {};
  const cli = startCli(['serve'], cleanEnv({ ...backingEnv(backing), ...recovery, SVC_PORT: String(port) }));
  try {
    await cli.waitForEvent('api.admin_ui');
    const path = oldNode ? `/usr/bin:/bin:${process.env.PATH}` : process.env.PATH!;
    const env = cleanEnv({ ...backingEnv(backing), PATH: path, SVC_LOG_LEVEL: 'silent' });
    // Not spawnSync: the mock provider answers from this process, whose event loop must keep running.
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      execFile('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: repoRoot, env, encoding: 'utf8', timeout: 90_000 }, (err, stdout, stderr) =>
        done({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }));
    });
    assert.is(r.status, 0, `${r.stderr}\n${r.stdout}`);
    assert.not.match(r.stdout, /"error"/, r.stdout);
    assert.match(r.stdout, /^created instance admin per_/i);
    assert.match(r.stdout, /"name":"local"/);
    assert.match(r.stdout, /"object":"chat\.completion".*"content":"Hello from the mock\."/s);
    const chats = mock.requests.filter((q) => q.path === '/v1/chat/completions');
    assert.equal(chats.map((q) => q.body.model), ['meta-llama/Llama-3.1-8B-Instruct'], 'the chat reached the provider once, with the provider\'s model id');
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited();
    await mock.stop();
  }
});

test('a busy port: exit 1 with one line naming the port and SVC_PORT', async () => {
  const port = await freePort();
  const busy: Server = createServer();
  await new Promise<void>((done) => busy.listen(port, '127.0.0.1', done));
  try {
    const cli = startCli(['serve'], cleanEnv({ ...backingEnv(backing), SVC_PORT: String(port), SVC_LOG_LEVEL: 'silent' }));
    assert.is(await cli.exited(60_000), 1);
    assert.is(cli.stderr(), `svc: port ${port} on 127.0.0.1 is already in use (listen EADDRINUSE): stop the other process or set SVC_PORT to a free port, e.g. SVC_PORT=8081\n`);
  } finally {
    await new Promise((done) => busy.close(done));
  }
});

test.run();
