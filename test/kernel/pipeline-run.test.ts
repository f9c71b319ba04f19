import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Pipeline } from '../../kernel/pipeline/pipeline.js';
import { phaseNames } from '../../kernel/pipeline/phases.js';
import type { RequestContext } from '../../kernel/pipeline/context.js';

const test = suite('kernel: pipeline run (synchronous until a hook returns a promise)');

/** Just what `run` reads of a request: its start and where phase times go. */
function fakeContext(): { ctx: RequestContext; timed: string[] } {
  const timed: string[] = [];
  const ctx = { startedAt: performance.now(), phases: { record: (i: number) => timed.push(phaseNames[i]!) } } as unknown as RequestContext;
  return { ctx, timed };
}

test('all hooks synchronous: the compensations come back as they are, no promise, every phase timed', () => {
  const p = new Pipeline();
  const order: string[] = [];
  const undoHold = (): void => void order.push('undo hold');
  p.add('authenticate', 'a', () => void order.push('authenticate'));
  p.add('admit', 'b', () => () => void order.push('undo admit'));
  p.add('hold', 'c', () => undoHold);
  const { ctx, timed } = fakeContext();
  const result = p.run(ctx, 'receive', 'hold');
  assert.ok(Array.isArray(result), 'not a promise');
  assert.is((result as unknown[]).length, 2);
  assert.is((result as unknown[])[1], undoHold);
  assert.equal(order, ['authenticate']);
  assert.equal(timed, ['authenticate', 'admit', 'hold']);
});

test('a hook returning a promise: the rest of its phase and the later phases run after it, in order', async () => {
  const p = new Pipeline();
  const order: string[] = [];
  p.add('validate', 'a', () => void order.push('validate 1'));
  p.add('validate', 'b', async () => {
    await new Promise((r) => setTimeout(r, 5));
    order.push('validate 2');
  });
  p.add('validate', 'c', () => void order.push('validate 3'));
  p.add('admit', 'd', async () => {
    order.push('admit');
    return () => void order.push('undo admit');
  });
  p.add('hold', 'e', () => void order.push('hold'));
  const { ctx, timed } = fakeContext();
  const result = p.run(ctx, 'validate', 'hold');
  assert.ok(result instanceof Promise);
  assert.equal(order, ['validate 1'], 'stopped at the pending hook');
  const undo = await result;
  assert.equal(order, ['validate 1', 'validate 2', 'validate 3', 'admit', 'hold']);
  assert.is(undo.length, 1);
  assert.equal(timed, ['validate', 'admit', 'hold']);
});

for (const when of ['synchronously', 'after a promise'] as const) {
  test(`a hook that fails ${when}: compensations so far run newest first, the error is rejected, later hooks do not run`, async () => {
    const p = new Pipeline();
    const order: string[] = [];
    p.add('admit', 'a', () => () => void order.push('undo admit'));
    p.add('hold', 'b', when === 'synchronously' ? () => () => void order.push('undo hold') : async () => () => void order.push('undo hold'));
    p.add('hold', 'c', () => {
      throw new Error('no budget');
    });
    p.add('dispatch', 'd', () => void order.push('dispatch'));
    const { ctx, timed } = fakeContext();
    const result = p.run(ctx, 'admit', 'dispatch');
    assert.ok(result instanceof Promise, 'a failure is always a rejected promise, never a synchronous throw');
    try {
      await result;
      assert.unreachable('should reject');
    } catch (err) {
      assert.is((err as Error).message, 'no budget');
    }
    assert.equal(order, ['undo hold', 'undo admit']);
    assert.equal(timed, ['admit', 'hold']);
  });
}

for (const outcome of ['resolves', 'rejects'] as const) {
  test(`the range's last hook returns a promise that ${outcome}: its compensation joins (or every one runs), the phase is timed once`, async () => {
    const p = new Pipeline();
    const order: string[] = [];
    p.add('admit', 'a', () => () => void order.push('undo admit'));
    p.add('hold', 'b', async () => {
      await new Promise((r) => setTimeout(r, 5));
      if (outcome === 'rejects') throw new Error('cache down');
      order.push('held');
      return () => void order.push('undo hold');
    });
    const { ctx, timed } = fakeContext();
    const result = p.run(ctx, 'admit', 'hold');
    assert.ok(result instanceof Promise);
    assert.equal(timed, ['admit'], 'hold is timed when its promise settles');
    if (outcome === 'resolves') {
      const undo = await result;
      assert.is(undo.length, 2);
      undo[1]!();
      assert.equal(order, ['held', 'undo hold']);
    } else {
      const err = await (result as Promise<unknown>).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.is((err as Error).message, 'cache down');
      assert.equal(order, ['undo admit']);
    }
    assert.equal(timed, ['admit', 'hold']);
  });
}

test.run();
