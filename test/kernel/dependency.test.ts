import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeadlineError, Dependency } from '../../kernel/health/dependency.js';
import { createLogger } from '../../kernel/log/logger.js';

/**
 * The deadline of database and cache calls: one timer for every call in flight, armed for the
 * oldest call's deadline (kernel/health/dependency.ts). These drive the rules a timer per call
 * used to give: each call is judged against its own deadline, an abandonable call is refused at
 * it, a write keeps waiting for its real answer, and a dependency found down refuses what waits.
 * (The fault tests drive the same through HTTP with a hung Redis and PostgreSQL.)
 */
const test = suite('kernel: dependency deadlines');
// The dependency's timers do not hold the process open (in the service the server does).
let keepAlive: NodeJS.Timeout | undefined;
test.before(() => {
  keepAlive = setInterval(() => undefined, 1000);
});
test.after(() => clearInterval(keepAlive));

const lines: string[] = [];
const log = createLogger('info', { write: (line: string) => lines.push(line) });
const DEADLINE = 200;
const dependency = () => new Dependency('cache', async () => undefined, log, { deadlineMs: DEADLINE, probeIntervalMs: 60_000, maxPending: 3 });
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);
const answerIn = <T>(ms: number, v: T): Promise<T> => sleep(ms).then(() => v);

/** The call's outcome and when it came, in ms after `since`. */
async function outcome(p: Promise<unknown>, since: number): Promise<{ at: number; value?: unknown; error?: unknown }> {
  return p.then(
    (value) => ({ at: performance.now() - since, value }),
    (error: unknown) => ({ at: performance.now() - since, error }),
  );
}

test('an abandonable call with no answer is refused with a DeadlineError at its deadline, not before', async () => {
  const dep = dependency();
  const t0 = performance.now();
  const r = await outcome(dep.call(never, { abandon: true }), t0);
  assert.instance(r.error, DeadlineError);
  assert.is((r.error as DeadlineError).code, 'ETIMEDOUT');
  assert.ok(r.at >= DEADLINE, `refused after ${r.at} ms`);
  assert.is(dep.pendingCalls, 1, 'the driver still owes its answer');
  dep.stop();
});

test('each call is judged by its own deadline: a later call is not refused at an earlier call\'s', async () => {
  const dep = dependency();
  const t0 = performance.now();
  const first = outcome(dep.call(() => answerIn(20, 'a'), { abandon: true }), t0);
  await sleep(DEADLINE / 2);
  const t1 = performance.now();
  const second = outcome(dep.call(never, { abandon: true }), t1);
  assert.equal((await first).value, 'a');
  const r = await second;
  assert.instance(r.error, DeadlineError);
  assert.ok(r.at >= DEADLINE, `the second call was refused ${r.at} ms after it began`);
  dep.stop();
});

test('answers in time settle with their values; the timer is re-armed for every call still waiting', async () => {
  const dep = dependency();
  const values = await Promise.all([dep.call(() => answerIn(5, 1), { abandon: true }), dep.call(() => answerIn(10, 2), { abandon: false })]);
  assert.equal(values, [1, 2]);
  // Three calls joining at different times, none answering: each refused, none before its own deadline.
  const starts: number[] = [];
  const refusals: Array<Promise<{ at: number; error?: unknown }>> = [];
  for (let i = 0; i < 3; i++) {
    starts.push(performance.now());
    refusals.push(outcome(dep.call(never, { abandon: true }), starts[i]!));
    await sleep(40);
  }
  for (const r of await Promise.all(refusals)) {
    assert.instance(r.error, DeadlineError);
    assert.ok(r.at >= DEADLINE, `refused ${r.at} ms after it began`);
  }
  dep.stop();
});

test('a write past its deadline keeps waiting for its real answer; repeated silence marks the dependency down', async () => {
  const dep = dependency();
  const write = dep.call(() => answerIn(DEADLINE * 2, 'written'), { abandon: false });
  await sleep(DEADLINE * 1.5);
  assert.is(dep.pendingCalls, 1);
  const read = outcome(dep.call(never, { abandon: true }), performance.now());
  assert.is(await write, 'written', 'the write was not abandoned');
  assert.not.ok(dep.down, 'an answer came in time to keep it up');
  assert.instance((await read).error, DeadlineError);
  dep.stop();
});

test('a refused connection marks it down and refuses every abandonable call waiting, at once', async () => {
  const dep = dependency();
  const t0 = performance.now();
  const waiting = outcome(dep.call(never, { abandon: true }), t0);
  const write = dep.call(() => answerIn(30, 'kept'), { abandon: false });
  const refused = dep.call(() => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), { abandon: true });
  assert.match(String((await outcome(refused, t0)).error), /ECONNREFUSED/);
  assert.ok(dep.down);
  assert.is(dep.reason, 'unreachable');
  const r = await waiting;
  assert.instance(r.error, DeadlineError);
  assert.ok(r.at < DEADLINE, 'refused when the dependency went down, before its deadline');
  assert.is(await write, 'kept', 'a write is never abandoned');
  assert.not.ok(dep.down, 'an answer brings it back up');
  dep.stop();
});

test('a call that throws before returning a promise is a rejection and leaves nothing waiting', async () => {
  const dep = dependency();
  for (const abandon of [true, false]) {
    const r = await outcome(dep.call(() => { throw new Error('bad statement'); }, { abandon }), 0);
    assert.match(String(r.error), /bad statement/);
  }
  assert.is(dep.pendingCalls, 0);
  assert.not.ok(dep.down, 'a refused statement is an answer');
  dep.stop();
});

test('past maxPending a call is refused at once', async () => {
  const dep = dependency();
  for (let i = 0; i < 3; i++) void dep.call(never, { abandon: true }).catch(() => undefined);
  assert.instance((await outcome(dep.call(() => Promise.resolve(1), { abandon: true }), 0)).error, DeadlineError);
  dep.stop();
});

test.run();
