import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../kernel/index.js';
import { ClassifierHost } from '../../plugins/routing/classifier-host.js';
import type { Route } from '../../plugins/routing/snapshot.js';
import { MemorySink } from '../support/harness.js';

const route = (name: string, description: string, examples: string[]): Route => ({ name, description, examples, version: '1', enabled: true }) as unknown as Route;
const routes = [
  route('code', 'Programming: writing, fixing and explaining code.', ['Write a Python function that sorts a list', 'Fix this JavaScript bug']),
  route('travel', 'Trips: flights, hotels and what to see.', ['Plan three days in Lisbon', 'Which hotel near the station?']),
];

test('the built-in table, deferred: ready to decide without being loaded; the first ask loads it and decides', async () => {
  const sink = new MemorySink();
  const host = new ClassifierHost(createLogger('info', sink));
  host.defer({ enabled: true });
  assert.is(host.state, 'ready');
  assert.is(host.encoder, null, 'not loaded yet');
  assert.equal(sink.events('routing.classifier_ready'), []);
  const c = await host.classify('Write a TypeScript function that parses a date', routes, 'req_1');
  assert.ok(c, 'a decision');
  assert.is(host.encoder, 'student');
  assert.is(sink.events('routing.classifier_ready').length, 1);
  await host.close();
});

test('deferring a disabled classifier is not a deferral: unavailable at once', async () => {
  const host = new ClassifierHost(createLogger('silent', new MemorySink()));
  host.defer({ enabled: false });
  for (let i = 0; i < 20 && host.state !== 'unavailable'; i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(host.state, 'unavailable');
  assert.is(await host.classify('anything at all here', routes, 'req_2'), null);
  await host.close();
});

test.run();
