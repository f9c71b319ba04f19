import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { capLines, encodeTrack, holdsSet, counterKey } from '../../plugins/budgets/reservation.js';
import type { Cap } from '../../plugins/budgets/caps.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, cacheOf, charged, client, newKey, personId, provision, startInstance, total } from './support.js';

const test = suite('budgets: holds — free models, abandoned holds, live holds');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a 0.00 model is never held nor capped, but rate limited; a priced one is refused with 402 and nothing sent', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const svc = await startInstance(backing, { rateLimit: { requests: 3, windowSeconds: 3600 } });
  try {
    await provision(svc.admin, mock, { priced: { input: '2.00', output: '8.00' }, free: { input: '0', output: '0.00' } });
    const key = await newKey(svc.admin, await svc.admin.workspace());
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 0, period: 'lifetime' });
    const c = client(svc, key.value);
    const ask = (model: string) => c.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 100 }).withResponse();
    const e = await ask('mock:priced').then(() => assert.unreachable('served over the cap'), apiError);
    assert.is(e!.status, 402);
    assert.is(e!.code, 'budget_exceeded');
    assert.is(e!.svc!.scope, 'instance');
    assert.is(e!.svc!.remaining_micro_usd, 0);
    assert.ok(Number(e!.svc!.required_micro_usd) >= 800, 'at least 100 output tokens at $8/M');
    const chats = () => mock.requests.filter((r) => r.path === '/v1/chat/completions').length;
    assert.is(chats(), 0);
    for (let i = 0; i < 3; i++) assert.is((await ask('mock:free')).response.status, 200);
    const limited = await ask('mock:free').then(() => assert.unreachable('over the rate limit'), apiError);
    assert.is(limited!.status, 429);
    assert.is(chats(), 3);
    await svc.flush();
    assert.equal(await svc.sql('select * from budget_holds'), [], 'free models take no hold');
    assert.is(await charged(svc), 0);
  } finally {
    await svc.stop();
    await mock.stop();
    await backing.drop();
  }
});

test('a hold its process never settled is reaped as abandoned and gives its room back; live holds are kept alive', async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const svc = await startInstance(backing, { budgets: { holdExpirySeconds: 1, reaperIntervalMs: 100 } });
  try {
    await provision(svc.admin, mock, { priced: { input: '1.00', output: '100.00' } });
    const ws = await svc.admin.workspace();
    const me = await personId(svc.admin);
    const key = await newKey(svc.admin, ws);
    await svc.admin.ok('POST', '/budget-caps', { amount_micro_usd: 100_000, period: 'month' });
    const cap: Cap = { id: 'x', scope: 'instance', workspaceId: '', subjectId: '', amountMicroUsd: 100_000, period: 'month', thresholds: [] };
    // What a crashed process leaves behind: 60,000 held, tracked with an expiry it will never push on.
    const now = Date.now();
    const lines = capLines([cap], 60_000, now, 86_400_000);
    lines[0]!.seed = 0; // the month's first spend: the counter starts at the (empty) total
    const member = encodeTrack({ i: 'crashed-hold', a: 60_000, k: [[lines[0]!.total, 'month']], r: 'req', w: ws, p: me, y: key.id, m: 'mock:priced', t: now });
    assert.ok((await cacheOf(svc).reserve(lines, { key: holdsSet, member, score: now + 1000 })).ok);

    const c = client(svc, key.value);
    const ask = () => c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 500 }).withResponse();
    const e = await ask().then(() => assert.unreachable('the crashed hold still counts'), apiError);
    assert.is(e!.status, 402);
    assert.is(e!.svc!.remaining_micro_usd, 40_000);

    let rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await sleep(100);
      await svc.flush();
      rows = await svc.sql("select * from budget_holds where state = 'abandoned'");
    }
    assert.is(rows.length, 1);
    assert.is(rows[0]!.id, 'crashed-hold');
    assert.is(Number(rows[0]!.amount_micro_usd), 60_000);
    assert.is(rows[0]!.charge_micro_usd, null);
    assert.equal(svc.logs.events('budget.holds_reaped').map((e) => e.count), [1]);

    // A stream that outlives the hold expiry is kept alive, not reaped, and settles normally.
    mock.enqueue({ chunks: ['a ', 'b ', 'c ', 'd ', 'e'], gapMs: 600 });
    const { data: stream, response } = await c.chat.completions.create({ model: 'mock:priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 500, stream: true }).withResponse();
    assert.is(response.status, 200);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.is(text, 'a b c d e');
    let states: Array<{ state: string }> = [];
    for (let i = 0; i < 50; i++) {
      await svc.flush();
      states = await svc.sql('select state from budget_holds order by state');
      if (states.length === 2) break;
      await sleep(50);
    }
    assert.equal(states.map((s) => s.state), ['abandoned', 'settled']);
    const month = `instance:*:month:${periodKey('month', Date.now())}`;
    assert.is(await total(svc, month), await charged(svc));
    assert.is(Number(await cacheOf(svc).get(counterKey(month))), await charged(svc), 'the counter is back to the settled total');
  } finally {
    await svc.stop();
    await mock.stop();
    await backing.drop();
  }
});

test.run();
