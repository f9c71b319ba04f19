import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shape } from '../support/harness.js';
import { StoreToken } from '../../kernel/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { startChatWorld, modelName, type ChatWorld } from './setup.js';

/** A settle hook that throws must neither stop the other settle hooks nor go unlogged. */
const test = suite(`chat settle failures (${shape})`);
const dir = mkdtempSync(join(tmpdir(), 'svc-settle-'));
const pluginFile = join(dir, 'broken-settle.mjs');
// Two settle hooks: the first throws, the second (registered after it) records that it still ran.
writeFileSync(
  pluginFile,
  `export default { name: 'broken-settle', register(ctx) {
    ctx.hook('settle', () => { throw new Error('boom'); });
    ctx.hook('settle', (rc) => { globalThis.svcSettledAfterFailure = rc.id; });
  } };\n`,
);
let w: ChatWorld;

test.before(async () => {
  w = await startChatWorld({ plugins: { 'broken-settle': { module: pluginFile } } });
});
test.after(async () => {
  await w.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the reply is served, the usage record still written, and the failure logged with the plugin and request id', async () => {
  const { response } = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  assert.is(response.status, 200);
  const id = response.headers.get('x-svc-request-id')!;
  await w.svc.service.get(TracingFlushToken)();
  const rows = await w.svc.service.get(StoreToken).execute('select id from usage_records where id = ?', [id]);
  assert.is(rows.length, 1);
  const logged = w.svc.logs.events('plugin.hook_failed');
  assert.equal(logged.map((e) => [e.level, e.plugin, e.phase, e.request_id]), [['error', 'broken-settle', 'settle', id]]);
  assert.is((globalThis as { svcSettledAfterFailure?: string }).svcSettledAfterFailure, id, 'the hook after the failing one ran');
  assert.not.match(w.svc.logs.text, /boom/);
});

test.run();
