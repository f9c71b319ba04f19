import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { PassThrough } from 'node:stream';
import { runCli } from '../../kernel/lifecycle/cli.js';
import { shape } from '../support/harness.js';

const test = suite(`the svc command (${shape})`);
const bin = resolve(packageRoot, 'dist/bin/svc.js');
const version = (JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
let cwd: string;

test.before(() => {
  cwd = mkdtempSync(join(tmpdir(), 'svc-cli-'));
});
test.after(() => {
  rmSync(cwd, { recursive: true, force: true });
});

/** Runs the real command in the empty folder, with no SVC_* variable set. */
function svc(...words: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...words], { cwd, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same command line in this process (no boot happens for these): faster than a process each. */
async function inProcess(...words: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const [out, err] = [new PassThrough(), new PassThrough()];
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  err.on('data', (c: Buffer) => (stderr += c.toString()));
  const status = await runCli(words, { stdout: out, stderr: err, env: {} });
  return { status, stdout, stderr };
}

function untouched(): void {
  assert.equal(readdirSync(cwd), [], 'nothing was created in the current folder');
}

test('svc --help lists serve, diagnostics, retention run, admin and other plugin commands; boots nothing', () => {
  for (const flag of ['--help']) {
    const r = svc(flag);
    assert.is(r.status, 0, r.stderr);
    for (const c of ['svc serve', 'svc diagnostics', 'svc retention run', 'svc admin create-admin', 'svc admin rotate-credentials', 'svc help <command>', 'svc --version']) {
      assert.ok(r.stdout.includes(c), `${flag} lists ${c}`);
    }
    assert.is(r.stderr, '');
  }
  untouched();
});

test('svc --version prints the version only', () => {
  const r = svc('--version');
  assert.is(r.status, 0);
  assert.is(r.stdout, `${version}\n`);
  untouched();
});

test('svc help <command> gives every listed command a usage line', async () => {
  assert.equal((await inProcess('-h')).stdout, (await inProcess('help')).stdout);
  const names = [...(await inProcess('--help')).stdout.matchAll(/^ {2}svc (\S+(?: [a-z][a-z-]+)?) {2,}/gm)].map((m) => m[1]!).filter((n) => !n.startsWith('help') && !n.startsWith('--'));
  assert.ok(names.length >= 5, names.join(','));
  for (const name of names) {
    const r = await inProcess('help', ...name.split(' '));
    assert.is(r.status, 0, `${name}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^usage: svc ${name}`), name);
  }
  assert.match((await inProcess('help', 'admin', 'create-admin')).stdout, /usage: svc admin create-admin --email <email> --password-file <file>/);
  assert.match((await inProcess('retention', 'run', '--help')).stdout, /^usage: svc retention run/);
  untouched();
});

test('bad arguments and unknown commands exit 2 with a usage line, before anything boots', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['bogus'], /unknown command "svc bogus"/],
    [['help', 'bogus'], /no command "svc bogus"/],
    [['retention', 'run', '--force'], /usage: svc retention run/],
    [['retention', 'run', 'now'], /usage: svc retention run/],
    [['diagnostics', '--all'], /usage: svc diagnostics/],
    [['serve', 'now'], /usage: svc serve/],
    [['--version', 'x'], /usage: svc --version/],
  ];
  for (const [words, message] of cases) {
    // The real binary for a few, the same code in process for the rest.
    const r = ['bogus', 'serve'].includes(words[0]!) || words[1] === 'run' && words[2] === '--force' ? svc(...words) : await inProcess(...words);
    assert.is(r.status, 2, `svc ${words.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.is(r.stdout, '');
  }
  untouched();
});

test('a plugin command without declared flags still exits 2 on bad arguments (after checking them itself)', () => {
  const data = join(cwd, '..', `svc-cli-data-${process.pid}`);
  try {
    const r = spawnSync(process.execPath, [bin, 'admin', 'create-admin', '--email', 'x@example.test'], { cwd, env: { PATH: process.env.PATH, SVC_DATA_DIR: data, SVC_LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 60_000 });
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, /usage: svc admin create-admin/);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
  untouched();
});

test.run();
