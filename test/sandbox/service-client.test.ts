import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxClientToken, type SandboxClient } from '../../kernel/index.js';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { startServiceProcess, supportDir, type ServiceProcess } from '../support/sandbox-services.js';
import { probe, sandboxSecret } from './sandbox-probe.js';

const test = suite(`sandbox client in the main service (${shape})`);
const egressSecret = 'egress-secret-for-service-test-0123';
let backing: Backing;
let hostDir: string;
let sandbox: ServiceProcess;
let egress: ServiceProcess;

test.before(async () => {
  backing = await createBacking();
  hostDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-svc-'));
  chmodSync(hostDir, 0o755); // the slots' own users must reach their folders under it
  egress = await startServiceProcess('egress', { SVC_EGRESS_HOST: '127.0.0.1', SVC_EGRESS_PORT: '0', SVC_EGRESS_SECRET: egressSecret });
  sandbox = await startServiceProcess('sandbox', {
    SVC_SANDBOX_HOST: '127.0.0.1', SVC_SANDBOX_PORT: '0', SVC_SANDBOX_SECRET: sandboxSecret, SVC_SANDBOX_SLOTS: '1',
    SVC_SANDBOX_WORK_DIR: join(hostDir, 'work'), SVC_SANDBOX_READ_ONLY: supportDir, SVC_SANDBOX_EGRESS: `127.0.0.1:${egress.port}`,
  });
});
test.after(async () => {
  await sandbox.stop();
  await egress.stop();
  rmSync(hostDir, { recursive: true, force: true });
  await backing.drop();
});

const clientOf = (svc: TestService): SandboxClient => svc.service.container.resolve<SandboxClient>(SandboxClientToken.id);

test('the booted service reaches the sandbox and the proxy through SandboxClientToken', async () => {
  const svc = await startService({ backing, env: { SVC_SANDBOX_URL: sandbox.url, SVC_SANDBOX_SECRET: sandboxSecret, SVC_EGRESS_URL: egress.url, SVC_EGRESS_SECRET: egressSecret } });
  try {
    const c = clientOf(svc);
    assert.equal(await c.reachability(), { sandbox: 'reachable', egress: 'reachable' });
    const { results, exit } = await probe(c, [['echo', { text: 'through svc' }]]);
    assert.equal(results, [{ text: 'through svc', uid: 65534, cwd: '/scratch' }]);
    assert.is(exit.reason, 'closed');
    await c.setEgressAllowList([{ host: 'registry.npmjs.org', port: 443 }]);
    assert.equal(await (await fetch(`${egress.url}/healthz`)).json(), { status: 'ok', allowed: 1 });
  } finally {
    await svc.stop();
  }
});

test('with the sandbox and proxy down the service stays healthy; only a sandboxed call fails', async () => {
  const svc = await startService({ backing, env: { SVC_SANDBOX_URL: 'http://127.0.0.1:1', SVC_SANDBOX_SECRET: sandboxSecret, SVC_EGRESS_URL: 'http://127.0.0.1:1' } });
  try {
    assert.is((await fetch(`${svc.url}/healthz`)).status, 200);
    const c = clientOf(svc);
    assert.equal(await c.reachability(), { sandbox: 'unreachable', egress: 'unreachable' });
    const session = c.open({ command: 'node', args: ['-e', '1'] });
    assert.is(await session.start().then(() => 'started', () => 'failed'), 'failed');
    assert.equal(await session.exited, { reason: 'unreachable', code: null });
  } finally {
    await svc.stop();
  }
});

test.run();
