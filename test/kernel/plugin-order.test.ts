import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { orderPlugins } from '../../kernel/plugin/order.js';
import { createBacking, startService, shape, type Backing } from '../support/harness.js';
import { pluginSource, tempDir } from './fixtures/cli.js';

const test = suite(`plugin order (${shape})`);

const names = (nodes: Array<{ name: string }>) => nodes.map((n) => n.name);

test('no dependencies: config order is kept', () => {
  assert.equal(names(orderPlugins([{ name: 'c' }, { name: 'a' }, { name: 'b' }])), ['c', 'a', 'b']);
});

test('a dependency listed later is moved before its dependant; ties keep config order', () => {
  assert.equal(names(orderPlugins([{ name: 'b', dependsOn: ['a'] }, { name: 'a' }])), ['a', 'b']);
  assert.equal(names(orderPlugins([{ name: 'x' }, { name: 'c', dependsOn: ['a'] }, { name: 'b' }, { name: 'a' }])), ['x', 'a', 'c', 'b']);
});

test('diamond: each plugin after all its dependencies, each once', () => {
  const out = names(
    orderPlugins([
      { name: 'top', dependsOn: ['left', 'right'] },
      { name: 'right', dependsOn: ['base'] },
      { name: 'left', dependsOn: ['base'] },
      { name: 'base' },
    ]),
  );
  assert.equal(out, ['base', 'left', 'right', 'top']);
});

test('the objects come back unchanged (extra fields kept)', () => {
  const a = { name: 'a', extra: 1 };
  const b = { name: 'b', dependsOn: ['a'], extra: 2 };
  const out = orderPlugins([b, a]);
  assert.ok(out[0] === a && out[1] === b);
});

test('unknown dependency and cycles (also a self-dependency) throw clear messages', () => {
  assert.throws(() => orderPlugins([{ name: 'a', dependsOn: ['zzz'] }]), /plugin "a" depends on "zzz", which is not configured or is disabled/);
  assert.throws(() => orderPlugins([{ name: 'a', dependsOn: ['b'] }, { name: 'b', dependsOn: ['a'] }]), /plugin dependency cycle: a -> b -> a/);
  assert.throws(() => orderPlugins([{ name: 'me', dependsOn: ['me'] }]), /plugin dependency cycle: me -> me/);
});

test('boot: plugin.order log event, register/start in that order, stop in reverse', async () => {
  const trail: string[] = [];
  (globalThis as { __svcOrderTrail?: string[] }).__svcOrderTrail = trail;
  const record = (n: string) => `(globalThis.__svcOrderTrail ??= []).push('register:${n}');`;
  const withLifecycle = (n: string, deps: string[]) =>
    pluginSource(n, { dependsOn: deps, register: record(n) }).replace(
      '};\n',
      `  start() { globalThis.__svcOrderTrail.push('start:${n}'); },\n  stop() { globalThis.__svcOrderTrail.push('stop:${n}'); },\n};\n`,
    );
  const dir = tempDir({
    'late.mjs': withLifecycle('order-late', ['order-early']),
    'mid.mjs': withLifecycle('order-mid', []),
    'early.mjs': withLifecycle('order-early', []),
  });
  const backing: Backing = await createBacking();
  const mod = (f: string) => ({ module: join(dir, f) });
  const svc = await startService({
    backing,
    overrides: { plugins: { 'order-late': mod('late.mjs'), 'order-mid': mod('mid.mjs'), 'order-early': mod('early.mjs') } },
  });
  try {
    const events = svc.logs.events('plugin.order');
    assert.is(events.length, 1);
    const order = (events[0]!.plugins as string[]).filter((n) => n.startsWith('order-'));
    assert.equal(order, ['order-early', 'order-late', 'order-mid']);
    assert.ok((events[0]!.plugins as string[]).includes('health'));
    assert.is(events[0]!.level, 'debug');
    assert.equal(svc.logs.events('api.started')[0]!.plugins, events[0]!.plugins);
  } finally {
    await svc.stop();
    await backing.drop();
  }
  assert.equal(trail, [
    'register:order-early', 'register:order-late', 'register:order-mid',
    'start:order-early', 'start:order-late', 'start:order-mid',
    'stop:order-mid', 'stop:order-late', 'stop:order-early',
  ]);
});

test.run();
