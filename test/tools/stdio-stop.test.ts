import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { callOnce } from './support.js';
import { startStdioWorld, stdioServer, type StdioWorld } from './stdio-world.js';

/**
 * Stopping `svc sandbox` (SIGTERM, as a container runtime does) right after or during a tool call
 * made through the gateway: the stop waits for the call's cleanup, so no control group of the call
 * is left for the next start to find (issue 27 item 13).
 */
const test = suite(`tools: stopping the sandbox right after or during a stdio call (${shape})`);
let w: StdioWorld;

test.before(async () => {
  w = await startStdioWorld();
  const r = await w.ws('POST', '/tool-servers', { name: 'local', transport: 'stdio', command: 'node', args: [stdioServer, 'modern'] });
  if (r.status !== 201) throw new Error(`register: ${r.status}`);
});
test.after(async () => w?.stop());
test.before.each(() => w.mock.reset());

/** This process's own control group path for a v1 controller (the sandbox, its child, starts in the same). */
const ownGroup = (controller: string): string =>
  readFileSync('/proc/self/cgroup', 'utf8').split('\n').map((l) => l.split(':')).find((p) => p[1]?.split(',').includes(controller))?.[2] ?? '/';

/** Control groups a sandbox process made that are still there: its v1 groups, or the call groups under its v2 `calls/`. */
function groupsLeft(pid: number, mode: string): string[] {
  if (mode === 'cgroup1') return ['memory', 'pids'].map((c) => join('/sys/fs/cgroup', c, ownGroup(c), `svc-sandbox-${pid}`)).filter((d) => existsSync(d));
  const calls = join('/sys/fs/cgroup', ownGroup(''), 'calls');
  return existsSync(calls) ? readdirSync(calls, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(calls, e.name)) : [];
}

/** Stops the sandbox; its `sandbox.stopped` event and the groups it left. */
async function stopSandbox(): Promise<{ stopped: Record<string, unknown>; left: string[] }> {
  const sandbox = w.sandbox;
  const mode = String(sandbox.logs.find((l) => l.event === 'sandbox.started')!.limits);
  await sandbox.stop();
  const stopped = sandbox.logs.find((l) => l.event === 'sandbox.stopped');
  assert.ok(stopped, `the stop is logged: ${JSON.stringify(sandbox.logs.map((l) => l.event))}`);
  return { stopped: stopped!, left: groupsLeft(sandbox.child.pid!, mode) };
}

const chatCalling = async (fn: string, args: Record<string, unknown>) => (await callOnce(w, fn, args)).told;

test('a stop right after a call waits for that call to be cleaned up: none of its control groups is left; the next start serves', async () => {
  assert.is(await chatCalling('local__lookup', { q: 'owl' }), 'stdio found: owl');
  const { stopped, left } = await stopSandbox();
  assert.equal(left, [], 'no control group left behind');
  assert.is(stopped.groups_removed, true);
  await w.restartSandbox();
  assert.is(await chatCalling('local__lookup', { q: 'wren' }), 'stdio found: wren');
});

test('a stop during a call ends it at once (the model is told the sandbox is not available), then waits for its cleanup', async () => {
  // A slot still being wiped after the previous test's call also reads as not free: wait until
  // every slot is free, so that "not free" below means this call is running.
  for (let i = 0; i < 400; i++) {
    const h = (await (await fetch(`${w.sandbox.url}/healthz`)).json()) as { free: number; slots: number };
    if (h.free === h.slots) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const reply = chatCalling('local__hang', {});
  // The call must be running before the stop (on a loaded machine it can take seconds to start).
  let busy = false;
  for (let i = 0; i < 400 && !busy; i++) {
    const health = (await (await fetch(`${w.sandbox.url}/healthz`)).json()) as { free: number };
    busy = health.free === 0;
    if (!busy) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(busy, 'the call started in the sandbox');
  const { stopped, left } = await stopSandbox();
  // Waiting for the sandbox's own time limit instead would tell the model the tool did not answer in time.
  assert.is(await reply, 'This tool cannot be used right now: the sandbox that runs command-line tools is not available.');
  assert.equal([stopped.calls_ended, stopped.groups_removed], [1, true]);
  assert.equal(left, []);
  await w.restartSandbox();
});

test.run();
