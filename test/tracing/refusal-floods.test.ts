import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StoreToken } from '../../kernel/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { startChatWorld, modelName, type ChatWorld } from '../chat/setup.js';

/**
 * Issue 25 "Done when": thousands of wrong-key and over-the-limit requests leave a bounded number
 * of rows (README "Refusals"): per minute and code one `refusal_counts` row and at most
 * `sampledRefusalsPerMinute` full records, while every refusal keeps its request id and is counted.
 */
const test = suite(`tracing: refusal floods write bounded rows (${shape})`);
let w: ChatWorld;
const allowance = 5;
const samples = 3;
const flood = 1500;

test.before(async () => {
  w = await startChatWorld({
    plugins: {
      routing: { config: { classifier: { enabled: false } } },
      'rate-limit': { config: { requests: allowance, windowSeconds: 3600 } },
      tracing: { config: { sampledRefusalsPerMinute: samples } },
    },
  });
});
test.after(async () => w.stop());

const body = JSON.stringify({ model: modelName, messages: [{ role: 'user', content: 'hi' }] });

async function send(key: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < n) {
      next++;
      const res = await fetch(`${w.svc.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const code = ((await res.json()) as { error?: { code?: string } }).error?.code ?? 'ok';
      const id = res.headers.get('x-svc-request-id') ?? '';
      assert.match(id, /^req_/, 'every refusal carries x-svc-request-id');
      ids.add(id);
      seen.set(`${res.status} ${code}`, (seen.get(`${res.status} ${code}`) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, one));
  assert.is(ids.size, n, 'request ids are distinct');
  return seen;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await w.svc.service.get(StoreToken).execute<{ n: string | number | null }>(sql, params);
  return Number(row?.n ?? 0);
}

test(`${flood} wrong keys and ${flood} requests past the rate limit: counted per minute, at most ${samples} full records each a minute`, async () => {
  const startedMinute = Math.floor(Date.now() / 60_000);
  const wrong = await send(`svc_${'x'.repeat(43)}`, flood);
  assert.equal(Object.fromEntries(wrong), { '401 invalid_api_key': flood });
  // The rate limit counts per clock minute: a flood that crossed into the next minute would be
  // allowed twice. Start it with at least 20 s of its minute left.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await sleep(left + 50);
  const limited = await send(w.apiKey, flood);
  assert.equal(Object.fromEntries(limited), { '200 ok': allowance, '429 rate_limited': flood - allowance });
  await w.svc.service.get(TracingFlushToken)();
  const minutes = Math.floor(Date.now() / 60_000) - startedMinute + 1;
  // Every refusal is counted…
  assert.is(await count("select sum(refusals) as n from refusal_counts where code = 'invalid_api_key'"), flood);
  assert.is(await count("select sum(refusals) as n from refusal_counts where code = 'rate_limited'"), flood - allowance);
  assert.ok((await count('select count(*) as n from refusal_counts')) <= 2 * minutes, 'one row per minute and code');
  // …but only the sampled ones (and the served requests) are recorded, whatever the flood's size.
  const bound = samples * minutes;
  const wrongRecords = await count("select count(*) as n from usage_records where error_code = 'invalid_api_key'");
  const limitedRecords = await count("select count(*) as n from usage_records where error_code = 'rate_limited'");
  assert.ok(wrongRecords >= 1 && wrongRecords <= bound, `${wrongRecords} usage records of wrong keys (bound ${bound})`);
  assert.ok(limitedRecords >= 1 && limitedRecords <= bound, `${limitedRecords} usage records of 429s (bound ${bound})`);
  assert.is(await count('select count(*) as n from usage_records where error_code is null'), allowance, 'served requests keep their records');
  const spans = await count("select count(*) as n from spans where name = 'chat.completions'");
  assert.is(spans, wrongRecords + limitedRecords + allowance, 'a span only where a usage record is kept');
  assert.ok(w.svc.logs.events('request.refusals_counted').length >= 1, 'the counting is logged (throttled)');
});

test('instance admins read the counts per minute and code', async () => {
  const res = await w.admin.call<{ data: Array<{ minute: string; code: string; count: number }> }>('GET', '/refusal-counts');
  assert.is(res.status, 200);
  const { data } = res.body;
  const total = (code: string) => data.filter((d) => d.code === code).reduce((a, d) => a + d.count, 0);
  assert.is(total('invalid_api_key'), flood);
  assert.is(total('rate_limited'), flood - allowance);
  assert.ok(data.every((d) => /Z$/.test(d.minute)));
  const member = await fetch(`${w.svc.url}/admin/v1/refusal-counts`, { headers: { authorization: `Bearer ${w.apiKey}` } });
  assert.ok(member.status === 401 || member.status === 403);
});

test.run();
