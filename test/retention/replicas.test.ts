import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { DAY, ids, insert, span, store } from './support.js';

const test = suite(`retention: two replicas, the scheduled run happens once (${shape})`);
let backing: Backing;
const replicas: TestService[] = [];

test.before(async () => {
  backing = await createBacking();
  // Every two seconds instead of daily: the claim is per scheduled slot (a minute), so both
  // replicas firing in the same minute must produce one run between them.
  const overrides = { plugins: { retention: { config: { schedule: '*/2 * * * * *' } } } };
  replicas.push(await startService({ backing, overrides }));
  replicas.push(await startService({ backing, overrides }));
});
test.after(async () => {
  for (const r of replicas) await r.stop();
  await backing.drop();
});

test('both replicas fire; one runs each slot, the other skips; each old row is deleted once', async () => {
  const [a, b] = replicas as [TestService, TestService];
  await insert(a, 'spans', span('old', Date.now() - 40 * DAY));
  await insert(a, 'spans', span('fresh', Date.now()));
  const deadline = Date.now() + 20_000;
  const fired = () => [...a.logs.lines, ...b.logs.lines].map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.trigger === 'schedule');
  while (Date.now() < deadline) {
    const events = fired();
    if (events.some((e) => e.event === 'retention.finished') && events.some((e) => e.event === 'retention.skipped')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const events = fired();
  const finished = events.filter((e) => e.event === 'retention.finished');
  assert.ok(finished.length >= 1, 'a scheduled run finished');
  assert.ok(events.some((e) => e.event === 'retention.skipped'), 'the other replica skipped');
  // No slot ran twice, on either replica.
  const runIds = finished.map((e) => e.run_id as string);
  assert.is(new Set(runIds).size, runIds.length);
  const rows = await store(a).execute<{ id: string }>("select id from retention_runs where run_trigger = 'schedule'");
  assert.ok(rows.length >= runIds.length);
  assert.equal(await ids(b, 'spans', 'trace_id'), ['fresh']);
  assert.is(finished.reduce((n, e) => n + Number(e.deleted), 0), 1);
});

test.run();
