import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { createBacking, shape } from '../support/harness.js';
import { startCatalog } from '../catalog/support/setup.js';
import { FeedServer, entry, listText, publisher } from './support.js';

const test = suite(`catalogue feed: svc catalogue keygen / sign / verify (${shape})`);
const dir = mkdtempSync(join(tmpdir(), 'svc-feed-cli-'));
const file = (name: string) => join(dir, name);

/** Runs the real `svc` binary (dist/bin/svc.js) in `dir`, without any database or cache configured. */
function svc(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(packageRoot, 'dist', 'bin', 'svc.js'), ...args], { cwd: dir, env: { PATH: process.env.PATH, SVC_DATA_DIR: file('data'), ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, out, err }));
  });
}

let publicKey = '';

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('keygen writes a private key (0600) and prints the public key; never overwrites; needs no database', async () => {
  const made = await svc(['catalogue', 'keygen', '--out', file('feed.pem')]);
  assert.is(made.code, 0, made.err);
  const m = /^public key: ([A-Za-z0-9+/]{43}=)$/m.exec(made.out);
  assert.ok(m, made.out);
  publicKey = m![1]!;
  assert.is(statSync(file('feed.pem')).mode & 0o777, 0o600);
  assert.match(readFileSync(file('feed.pem'), 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  assert.not.ok(made.out.includes('PRIVATE KEY'), 'the private key is not printed');
  assert.not.ok(existsSync(file('data')), 'no database was opened');
  const again = await svc(['catalogue', 'keygen', '--out', file('feed.pem')]);
  assert.equal([again.code, /refusing to overwrite/.test(again.err)], [1, true]);
});

test('sign makes a document that verify accepts with the key given or pinned in config; a tampered one fails', async () => {
  writeFileSync(file('list.json'), listText(9, { openai: [entry('gpt-cli', 400_000, 1_600_000)] }, '2026-11-22T08:00:00Z'));
  const signed = await svc(['catalogue', 'sign', '--key', file('feed.pem'), '--list', file('list.json'), '--out', file('signed.json')]);
  assert.is(signed.code, 0, signed.err);
  assert.is(signed.out, 'signed: sequence 9, issued_at 2026-11-22T08:00:00.000Z, 1 providers, 1 models\n');
  const doc = JSON.parse(readFileSync(file('signed.json'), 'utf8')) as { format: string; signature: string; list: string };
  assert.equal([doc.format, doc.list], ['svc-catalogue-feed', readFileSync(file('list.json'), 'utf8')]);

  const given = await svc(['catalogue', 'verify', '--in', file('signed.json'), '--public-key', publicKey]);
  assert.equal([given.code, given.out], [0, 'ok: sequence 9, issued_at 2026-11-22T08:00:00.000Z, 1 providers, 1 models\n']);
  writeFileSync(file('config.json'), JSON.stringify({ plugins: { 'catalogue-feed': { config: { publicKeys: [publicKey] } } } }));
  const pinned = await svc(['catalogue', 'verify', '--in', file('signed.json')], { SVC_CONFIG: file('config.json') });
  assert.is(pinned.code, 0, pinned.err);

  writeFileSync(file('tampered.json'), JSON.stringify({ ...doc, list: doc.list.replace('400000', '1') }));
  const tampered = await svc(['catalogue', 'verify', '--in', file('tampered.json'), '--public-key', publicKey]);
  assert.equal([tampered.code, tampered.err], [1, 'svc: bad_signature: the signature does not verify with a pinned public key\n']);
  const other = await svc(['catalogue', 'verify', '--in', file('signed.json'), '--public-key', publisher().publicKey]);
  assert.equal([other.code, /bad_signature/.test(other.err)], [1, true]);
  const noKey = await svc(['catalogue', 'verify', '--in', file('signed.json')]);
  assert.equal([noKey.code, /no public key/.test(noKey.err)], [1, true]);
});

test('sign refuses a list the service would refuse', async () => {
  writeFileSync(file('bad.json'), JSON.stringify({ version: 1, sequence: 10, issued_at: '2026-11-22T09:00:00Z', providers: { openai: [{ ...entry('x', 1, 1), output_limit: 999_999 }] } }));
  const r = await svc(['catalogue', 'sign', '--key', file('feed.pem'), '--list', file('bad.json')]);
  assert.equal([r.code, r.out], [1, '']);
  assert.match(r.err, /output_limit is above context_window/);
});

test('the service applies a list published with the CLI', async () => {
  const host = new FeedServer();
  const backing = await createBacking();
  const url = await host.start();
  host.body = readFileSync(file('signed.json'), 'utf8');
  const s = await startCatalog(backing, {}, { plugins: { 'catalogue-feed': { config: { publicKeys: [publicKey] } } } });
  try {
    const status = await s.admin.ok<{ applied: { sequence: number } | null }>('PUT', '/catalogue-feed', { url });
    assert.is(status.applied?.sequence, 9);
    const m = await s.admin.ok<{ output_micro_usd_per_mtok: number }>('GET', `/built-in-models/${encodeURIComponent('openai:gpt-cli')}`);
    assert.is(m.output_micro_usd_per_mtok, 1_600_000);
  } finally {
    await s.stop();
    await backing.drop();
    await host.stop();
  }
});

test.run();
