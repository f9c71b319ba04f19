import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RetentionToken } from '../../kernel/index.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { apiError, budgetPlugins, charged, client, newKey, provision, startInstance, total, type Instance } from '../budgets/support.js';
import { DAY } from './support.js';

const test = suite(`retention: lifetime caps survive the deletion of usage records (${shape})`);
let backing: Backing;
let mock: MockUpstream;
let i: Instance;

test.before(async () => {
  backing = await createBacking();
  mock = await new MockUpstream().start();
  i = await startInstance(backing, { plugins: { ...budgetPlugins(), retention: { config: { schedule: '' } } } });
});
test.after(async () => {
  await i?.stop();
  await mock.stop();
  await backing.drop();
});

test('a key at its lifetime cap is still refused, for the same room, after retention deleted its usage', async () => {
  await provision(i.admin, mock, { m: { input: '100.00', output: '100.00', outputLimit: 1000 } });
  const ws = await i.admin.workspace('lifetime');
  const key = await newKey(i.admin, ws);
  await i.admin.ok('POST', `/workspaces/${ws}/budget-caps`, { scope: 'key', key_id: key.id, amount_micro_usd: 150_000, period: 'lifetime' });
  await new Promise((r) => setTimeout(r, 200));
  const c = client(i, key.value);
  mock.enqueue({ reply: { content: 'ok', usage: { prompt_tokens: 100, completion_tokens: 900 } } });
  await c.chat.completions.create({ model: 'mock:m', messages: [{ role: 'user', content: 'spend' }] });
  await i.flush();
  const refusal = async () => {
    const e = apiError(await c.chat.completions.create({ model: 'mock:m', messages: [{ role: 'user', content: 'again' }] }).catch((err: unknown) => err));
    assert.is(e.status, 402);
    assert.is(e.code, 'budget_exceeded');
    assert.is(e.svc?.scope, 'key');
    return e.svc?.remaining_micro_usd;
  };
  const before = await refusal();
  assert.is(before, 50_000);
  assert.is(await charged(i, 'key_id = ?', [key.id]), 100_000);
  const totalKey = `key:${key.id}:lifetime:all`;
  assert.is(await total(i, totalKey), 100_000);

  // Fourteen months later every usage record of the key is past its period.
  const run = await i.service.get(RetentionToken).run({ now: new Date(Date.now() + 14 * 31 * DAY) });
  assert.ok(run!.counts.usage_records >= 1);
  assert.is(await charged(i, 'key_id = ?', [key.id]), 0);
  assert.is(await total(i, totalKey), 100_000);
  assert.is(await refusal(), before);
});

test.run();
