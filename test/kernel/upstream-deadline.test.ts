import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CallDeadline, RequestAbort } from '../../kernel/upstream/http.js';

/**
 * CallDeadline is an upstream call's signal (kernel/upstream/http.ts): it must behave as the
 * AbortSignal the pool took before — aborted once, each listener called once, the request's
 * abort followed with its reason — without being an EventTarget.
 */
const test = suite('kernel: upstream call deadline (the call\'s signal)');

test('the deadline fires once: fired names it, listeners run once in order, a removed one does not run', async () => {
  const d = new CallDeadline();
  const request = new AbortController();
  const signal = d.follow(request.signal);
  const calls: string[] = [];
  const removed = (): void => void calls.push('removed');
  signal.addEventListener('abort', () => calls.push('first'), { once: true });
  signal.addEventListener('abort', removed);
  signal.addEventListener('abort', () => calls.push('second'));
  signal.removeEventListener('abort', removed);
  d.arm(20, 'idle');
  assert.is(signal.aborted, false);
  await sleep(60);
  assert.is(signal.aborted, true);
  assert.is(d.fired, 'idle');
  assert.is((signal.reason as Error).message, 'idle');
  assert.equal(calls, ['first', 'second']);
  d.abort();
  request.abort(new Error('late'));
  assert.equal(calls, ['first', 'second'], 'never again');
  signal.addEventListener('abort', () => calls.push('after'));
  assert.equal(calls, ['first', 'second'], 'a listener added after the abort is not called (as with AbortSignal)');
});

test("the request's abort ends the call with the request's reason and stops the timer", async () => {
  const d = new CallDeadline();
  const request = new AbortController();
  const signal = d.follow(request.signal);
  let heard = 0;
  signal.addEventListener('abort', () => heard++);
  d.arm(30, 'timeout');
  const reason = new Error('client left');
  request.abort(reason);
  assert.is(signal.reason, reason);
  assert.is(heard, 1);
  await sleep(60);
  assert.is(d.fired, undefined, 'the timer did not fire after the request ended the call');
  // A request already aborted: the call starts aborted.
  const gone = new CallDeadline().follow(AbortSignal.abort(reason));
  assert.is(gone.aborted, true);
  assert.is(gone.reason, reason);
});

test('clear: the timer and the request are no longer followed; signal is a real AbortSignal that follows the deadline', async () => {
  const d = new CallDeadline();
  const request = new AbortController();
  const signal = d.follow(request.signal);
  d.arm(20, 'timeout');
  d.clear();
  request.abort(new Error('after clear'));
  await sleep(50);
  assert.is(signal.aborted, false);
  assert.is(d.fired, undefined);
  const real = d.abortSignal;
  assert.instance(real, AbortSignal);
  const any = AbortSignal.any([new AbortController().signal, real]);
  d.abort();
  assert.is(real.aborted, true);
  assert.is(any.aborted, true);
  assert.is((any.reason as Error).message, 'done');
  // Asked for after the end: already aborted, with the same reason.
  const late = new CallDeadline();
  late.abort();
  assert.is(late.abortSignal.aborted, true);
  assert.is((late.abortSignal.reason as Error).message, 'done');
});

test('a request abort: listeners once each in order, removed ones not called, and an AbortSignal made on demand', () => {
  const a = new RequestAbort();
  const calls: string[] = [];
  const second = (): void => void calls.push('second');
  a.addEventListener('abort', () => calls.push('first'));
  a.addEventListener('abort', second);
  a.addEventListener('abort', () => calls.push('third'));
  a.removeEventListener('abort', second);
  const real = a.abortSignal;
  a.abort(new Error('gone'));
  a.abort(new Error('again'));
  assert.equal(calls, ['first', 'third']);
  assert.is(a.aborted, true);
  assert.is((a.reason as Error).message, 'gone');
  assert.is(real.aborted, true);
  assert.is((real.reason as Error).message, 'gone');
  assert.throws(() => a.throwIfAborted(), (e: Error) => e.message === 'gone');
  // A deadline following it ends with its reason.
  const d = new CallDeadline();
  const c = new RequestAbort();
  d.follow(c);
  c.abort(new Error('client left'));
  assert.is(d.aborted, true);
  assert.is((d.reason as Error).message, 'client left');
  // Following an AbortSignal (an adapter's caller that has one).
  const controller = new AbortController();
  const f = RequestAbort.following(controller.signal);
  assert.is(f.aborted, false);
  controller.abort(new Error('stop'));
  assert.is(f.aborted, true);
  assert.is((f.reason as Error).message, 'stop');
});

test.run();
