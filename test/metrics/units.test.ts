import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chargeMicroUsd } from '../../kernel/index.js';
import { charge } from '../../plugins/metrics/request-metrics.js';
import { CounterFamily, HistogramFamily, maxSeries } from '../../plugins/metrics/families.js';

const test = suite('metrics: units — the BigInt-free charge, families');

test('charge equals the kernel chargeMicroUsd (rounding up to a whole micro-USD), past the safe range too', () => {
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const cases: Array<[number, number, number, number]> = [[0, 0, 0, 0], [1, 0, 1, 0], [999_999, 1, 0, 0], [1, 1_000_001, 1, 1], [2 ** 40, 2 ** 40, 3, 3], [2 ** 50, 7, 100_000_001, 3]];
  for (let i = 0; i < 20_000; i++) cases.push([rnd(2_000_000), rnd(200_000), rnd(100_000_000), rnd(400_000_000)]);
  for (const [pt, ct, ip, op] of cases) {
    const model = { inputMicroUsdPerMTok: ip, outputMicroUsdPerMTok: op };
    const usage = { prompt_tokens: pt, completion_tokens: ct };
    assert.is(charge(model, usage), chargeMicroUsd(model, usage), JSON.stringify([pt, ct, ip, op]));
  }
});

test('families: series by label values, cumulative buckets, the _other fold past maxSeries', async () => {
  const c = new CounterFamily('x_total', 'x', ['a', 'b']);
  c.inc(2, 'p', 'q');
  c.inc(3, 'p', 'q');
  c.inc(1, 'p', 'r');
  assert.equal((await c.get()).values, [{ labels: { a: 'p', b: 'q' }, value: 5 }, { labels: { a: 'p', b: 'r' }, value: 1 }]);
  const h = new HistogramFamily('y_seconds', 'y', ['m'], [0.1, 1]);
  for (const v of [0.05, 0.5, 0.7, 5]) h.observe(v, 'm1');
  const values = (await h.get()).values as Array<{ metricName: string; labels: Record<string, unknown>; value: number }>;
  assert.equal(values.map((v) => [v.metricName, v.labels.le ?? null, v.value]), [
    ['y_seconds_bucket', 0.1, 1], ['y_seconds_bucket', 1, 3], ['y_seconds_bucket', '+Inf', 4], ['y_seconds_sum', null, 6.25], ['y_seconds_count', null, 4],
  ]);
  const many = new CounterFamily('z_total', 'z', ['k']);
  for (let i = 0; i < maxSeries + 10; i++) many.inc(1, `v${i}`);
  const got = (await many.get()).values as Array<{ labels: { k: string }; value: number }>;
  assert.is(got.length, maxSeries + 1);
  assert.equal(got.at(-1), { labels: { k: '_other' }, value: 10 });
});

test.run();
