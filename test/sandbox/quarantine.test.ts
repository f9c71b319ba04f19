import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shape } from '../support/harness.js';
import { startServiceProcess, supportDir, type ServiceProcess } from '../support/sandbox-services.js';
import { client, probe, sandboxSecret } from './sandbox-probe.js';

const test = suite(`sandbox quarantine (${shape})`);
let hostDir: string;
let sandbox: ServiceProcess;
const mounted: string[] = [];

test.before(async () => {
  hostDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-q-'));
  chmodSync(hostDir, 0o755); // the slots' own users must reach their folders under it
  sandbox = await startServiceProcess('sandbox', {
    SVC_SANDBOX_HOST: '127.0.0.1', SVC_SANDBOX_PORT: '0', SVC_SANDBOX_SECRET: sandboxSecret, SVC_SANDBOX_SLOTS: '2',
    SVC_SANDBOX_WORK_DIR: join(hostDir, 'work'), SVC_SANDBOX_READ_ONLY: supportDir, SVC_SANDBOX_EGRESS: '127.0.0.1:9',
  });
});
test.after(async () => {
  await sandbox.stop();
  for (const m of mounted) execFileSync('umount', [m]);
  rmSync(hostDir, { recursive: true, force: true });
});

/**
 * A call whose leftovers cannot be removed: while it runs, a file system is mounted on a folder
 * it made in its scratch (standing in for anything the host cannot clean up), so wiping fails.
 */
async function callLeavingAMount(): Promise<void> {
  const stuck = (): string | undefined => [0, 1].map((i) => join(hostDir, 'work', `slot-${i}`, 'scratch', 'stuck')).find((p) => existsSync(p) && !mounted.includes(p));
  const { results } = await probe(client(sandbox.url), [['mkdir', { path: '/scratch/stuck' }]], async () => {
    const path = stuck()!;
    execFileSync('mount', ['-t', 'tmpfs', 'none', path]);
    mounted.push(path);
  });
  assert.equal(results, [{ made: true }]);
}

test('a slot whose call leaves something behind is quarantined; the others keep working', async () => {
  await callLeavingAMount();
  const q = await sandbox.waitFor('sandbox.slot_quarantined');
  assert.equal([q.level, q.reason], ['error', 'scratch_not_removed']);
  const health = await fetch(`${sandbox.url}/healthz`);
  assert.is(health.status, 200);
  assert.equal(await health.json(), { status: 'ok', slots: 2, free: 1, quarantined: 1 });
  const ok = await probe(client(sandbox.url), [['echo', { text: 'still here' }]]);
  assert.equal((ok.results[0] as { text: string }).text, 'still here');
});

test('when every slot is quarantined the sandbox logs sandbox.exhausted and exits non-zero', async () => {
  await callLeavingAMount();
  const e = await sandbox.waitFor('sandbox.exhausted');
  assert.equal([e.level, e.slots], ['fatal', 2]);
  assert.is(await sandbox.exited, 1);
  assert.equal(sandbox.logs.filter((l) => l.event === 'sandbox.slot_quarantined').map((l) => l.slot).sort(), [0, 1]);
});

test('sandbox.start_failed carries a reason and the process exits 1', async () => {
  const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
  const run = (env: Record<string, string>): Promise<{ code: number | null; line: Record<string, unknown> }> =>
    new Promise((done) => {
      const child = spawn(process.execPath, [bin, 'sandbox'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      child.on('exit', (code) => done({ code, line: JSON.parse(out.trim().split('\n')[0]!) as Record<string, unknown> }));
    });
  const noSecret = await run({});
  assert.equal([noSecret.code, noSecret.line.event, noSecret.line.reason], [1, 'sandbox.start_failed', 'SVC_SANDBOX_SECRET must be set (at least 16 characters)']);
  writeFileSync(join(hostDir, 'a-file'), '');
  const badWorkDir = await run({ SVC_SANDBOX_SECRET: sandboxSecret, SVC_SANDBOX_PORT: '0', SVC_SANDBOX_WORK_DIR: join(hostDir, 'a-file', 'work') });
  assert.equal([badWorkDir.code, badWorkDir.line.event], [1, 'sandbox.start_failed']);
  assert.match(String(badWorkDir.line.reason), /^work folder not usable/);
});

test.run();
