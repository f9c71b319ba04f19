import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { missingEnvironment, missingNodeFlags, missingRuntimeFlags, serviceEnvironment, serviceNodeFlags, serviceRuntimeFlags } from '../../kernel/lifecycle/node-flags.js';
import { createBacking, type Backing } from '../support/harness.js';
import { startReplica } from '../support/child-replica.js';

/** The command line of a running process, as the kernel shows it. */
const commandLine = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
/** The environment a running process was started with (as its last execve set it). */
const environment = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);

let backing: Backing;
test.before(async () => {
  backing = await createBacking();
});
test.after(async () => {
  await backing.drop();
});

test('missingNodeFlags: a flag set on the command line or in NODE_OPTIONS (any value, _ or -) is not added again', () => {
  assert.equal(missingNodeFlags([]), [...serviceNodeFlags]);
  assert.ok(serviceNodeFlags.includes('--no-allocation-site-pretenuring'));
  assert.equal(missingNodeFlags(['--max-semi-space-size=16']), ['--no-allocation-site-pretenuring']);
  assert.equal(missingNodeFlags(['--enable-source-maps'], '--max_semi_space_size=8 --trace-gc'), ['--no-allocation-site-pretenuring']);
  assert.equal(missingNodeFlags(['--allocation-site-pretenuring', '--max-semi-space-size=16']), [], 'the operator turned pretenuring back on');
  assert.equal(missingNodeFlags(['--enable-source-maps'], ''), [...serviceNodeFlags]);
});

test('missingRuntimeFlags: the tiering flag is set after start-up unless the command line set its option (V8 flags are not allowed in NODE_OPTIONS)', () => {
  assert.ok(serviceRuntimeFlags.includes('--invocation-count-for-turbofan=300'));
  assert.equal(missingRuntimeFlags([]), [...serviceRuntimeFlags]);
  assert.equal(missingRuntimeFlags(['--max-semi-space-size=16']), [...serviceRuntimeFlags]);
  assert.equal(missingRuntimeFlags(['--invocation-count-for-turbofan=1000']), []);
  assert.equal(missingRuntimeFlags(['--invocation_count_for_turbofan=50']), []);
});

test('missingEnvironment: the allocator setting is added unless the operator set it or a glibc tunable for it', () => {
  assert.equal(missingEnvironment({}), { ...serviceEnvironment });
  assert.equal(missingEnvironment({ MALLOC_MMAP_THRESHOLD_: '65536' }), {});
  assert.equal(missingEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=262144' }), {});
  assert.equal(missingEnvironment({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }), { ...serviceEnvironment });
});

test('`node dist/bin/svc.js serve` runs with the service flags, as the same process, and serves', async () => {
  const r = await startReplica(backing, {});
  try {
    const argv = commandLine(r.pid);
    for (const flag of serviceNodeFlags) assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`);
    assert.ok(argv.includes('--enable-source-maps'), 'the flags it was started with are kept');
    assert.ok(argv.at(-2)!.endsWith('dist/bin/svc.js') && argv.at(-1) === 'serve', argv.join(' '));
    assert.ok(environment(r.pid).includes('MALLOC_MMAP_THRESHOLD_=131072'), 'the allocator setting is in its environment');
    const started = JSON.parse(r.lines.find((l) => l.includes('"api.started"'))!) as { node_flags?: string[] };
    assert.equal(started.node_flags, [...serviceRuntimeFlags], 'the runtime flags are set once it listens');
    assert.not.ok(argv.some((a) => a.startsWith('--invocation-count-for-turbofan')), 'not on the command line: start-up runs with V8 defaults');
    const health = await fetch(`${r.url}/healthz`);
    assert.is(health.status, 200);
  } finally {
    await r.stop();
  }
});

test('an operator’s own value (NODE_OPTIONS) wins, and SVC_NODE_FLAGS=off applies none', async () => {
  const own = await startReplica(backing, {}, 30_000, { NODE_OPTIONS: '--max-semi-space-size=8', MALLOC_MMAP_THRESHOLD_: '65536' });
  try {
    assert.not.ok(commandLine(own.pid).some((a) => a.startsWith('--max-semi-space-size')));
    assert.ok(environment(own.pid).includes('MALLOC_MMAP_THRESHOLD_=65536'));
    const started = JSON.parse(own.lines.find((l) => l.includes('"api.started"'))!) as { node_flags?: string[] };
    assert.equal(started.node_flags, [...serviceRuntimeFlags], 'the runtime flags are independent of the heap flags');
  } finally {
    await own.stop();
  }
  const off = await startReplica(backing, {}, 30_000, { SVC_NODE_FLAGS: 'off' });
  try {
    assert.not.ok(commandLine(off.pid).some((a) => a.startsWith('--max-semi-space-size')));
    assert.not.ok(environment(off.pid).some((e) => e.startsWith('MALLOC_MMAP_THRESHOLD_=')));
    const started = JSON.parse(off.lines.find((l) => l.includes('"api.started"'))!) as { node_flags?: string[] };
    assert.equal(started.node_flags, []);
    assert.is((await fetch(`${off.url}/healthz`)).status, 200);
  } finally {
    await off.stop();
  }
});

test.run();
