import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { packageRoot } from '../../kernel/paths.js';
import { createBacking, MemorySink, shape, type Backing, type TestService } from '../support/harness.js';
import { boot, call, commandService, signIn } from './support.js';

const test = suite(`identity: svc admin create-admin (${shape})`);
let backing: Backing;

test.before(async () => {
  backing = await createBacking();
});
test.after(async () => {
  await backing.drop();
});

/** Runs `svc <words>` in process; resolves with stdout, or rejects with the command's error. */
async function svc(words: string[], logs = new MemorySink()): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  await commandService(backing, logs).runCommand(words, out);
  return text;
}

function passwordFile(name: string, content: string): string {
  const file = join(backing.dataDir, name);
  writeFileSync(file, content);
  return file;
}

test('creates an instance admin; the password file loses one trailing newline; nothing secret is logged', async () => {
  const logs = new MemorySink();
  const file = passwordFile('pw1', 'canary-cli-password-1\n');
  const out = await svc(['admin', 'create-admin', '--email', 'Ops@Example.test', '--password-file', file], logs);
  assert.match(out, /^created instance admin per_[A-Za-z0-9_-]{16}\n$/);
  assert.not.ok(logs.text.includes('canary-cli-password-1'));
  assert.ok(logs.events('identity.audit').some((e) => e.action === 'admin_bootstrapped'));
  let s: TestService | undefined;
  try {
    s = await boot(backing, { noAdmin: true });
    const token = await signIn(s.url, 'ops@example.test', 'canary-cli-password-1');
    const me = await call(s.url, 'GET', '/me', { auth: token });
    assert.is(me.body.person.instance_admin, true);
    assert.is((await call(s.url, 'POST', '/sessions', { body: { email: 'ops@example.test', password: 'canary-cli-password-1\n' } })).status, 401);
  } finally {
    await s?.stop();
  }
});

test('fails clearly when the email exists, the file is missing, the password is short or flags are absent', async () => {
  const file = passwordFile('pw2', 'another-password-2\n');
  const failure = async (words: string[]): Promise<string> => {
    try {
      await svc(words);
      return 'no error';
    } catch (err) {
      return (err as Error).message;
    }
  };
  assert.match(await failure(['admin', 'create-admin', '--email', 'ops@example.test', '--password-file', file]), /already exists/);
  assert.match(await failure(['admin', 'create-admin', '--email', 'new@example.test', '--password-file', join(backing.dataDir, 'missing')]), /cannot read the password file: ENOENT/);
  assert.match(await failure(['admin', 'create-admin', '--email', 'new@example.test', '--password-file', passwordFile('pw3', 'short\n')]), /at least 10 characters/);
  assert.match(await failure(['admin', 'create-admin', '--email', 'not-an-email', '--password-file', file]), /--email is not a valid email/);
  assert.match(await failure(['admin', 'create-admin', '--email', 'new@example.test']), /usage: svc admin create-admin/);
  const message = await failure(['admin', 'create-admin', `--email=short@example.test`, `--password-file=${passwordFile('pw4', 'tiny\n')}`]);
  assert.not.ok(message.includes('tiny'));
});

test('the real command line: node dist/bin/svc.js admin create-admin', () => {
  const config = join(backing.dataDir, 'config.json');
  writeFileSync(config, JSON.stringify({ plugins: { 'admin-api': {}, identity: {} } }));
  const file = passwordFile('pw5', 'canary-spawned-password\n');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, SVC_CONFIG: config, SVC_DATA_DIR: backing.dataDir, SVC_LOG_LEVEL: 'debug' };
  if (backing.databaseUrl) Object.assign(env, { SVC_DATABASE_URL: backing.databaseUrl, SVC_REDIS_URL: backing.redisUrl, SVC_REDIS_PREFIX: backing.redisPrefix });
  const run = () => spawnSync(process.execPath, ['dist/bin/svc.js', 'admin', 'create-admin', '--email', 'cli@example.test', '--password-file', file], { cwd: packageRoot, env, encoding: 'utf8', timeout: 60_000 });
  const first = run();
  assert.is(first.status, 0, first.stderr);
  assert.match(first.stdout, /^created instance admin per_/);
  assert.not.ok(first.stderr.includes('canary-spawned-password'));
  const second = run();
  assert.is(second.status, 1);
  assert.match(second.stderr, /svc: create-admin: a person with that email already exists/);
  assert.not.ok(second.stderr.includes('canary-spawned-password'));
});

test.run();
