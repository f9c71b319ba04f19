import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CacheToken, RetentionToken } from '../../kernel/index.js';
import { PassThrough } from 'node:stream';
import { Service } from '../../kernel/lifecycle/service.js';
import { createBacking, MemorySink, shape, startService, testRecoveryKeys, type Backing, type TestService } from '../support/harness.js';
import { adminEmail, adminPassword, call, newPerson, signIn } from '../identity/support.js';
import { alert, DAY, hold, ids, insert, span, store, usage } from './support.js';

const test = suite(`retention: kinds, periods, floor, running totals (${shape})`);
let backing: Backing;
let s: TestService;
let token: string;
// The fake clock: 2027-03-30 03:17 UTC.
const now = new Date(Date.UTC(2027, 2, 30, 3, 17));
const T = now.getTime();
const ago = (days: number) => T - days * DAY;
const conversation = (id: string, at: number) => ({ id, workspace_id: 'w', person_id: 'p', key_id: null, title: null, decision: null, created_at: at, updated_at: at });
const message = (id: string, conversationId: string, at: number) => ({
  id, conversation_id: conversationId, request_id: 'r', position: 0, message: '{"role":"user","content":"hi"}', model: null, created_at: at,
});

test.before(async () => {
  backing = await createBacking();
  s = await startService({
    backing,
    env: { SVC_ADMIN_EMAIL: adminEmail, SVC_ADMIN_PASSWORD: adminPassword, SVC_OTLP_ENDPOINT: 'https://collector.example.net:4318/v1/traces?token=canary-otlp-token' },
    overrides: { plugins: { retention: { config: { schedule: '', batchSize: 2, pauseMs: 0 } } } },
  });
  token = await signIn(s.url, adminEmail, adminPassword);
});
test.after(async () => {
  await s?.stop();
  await backing.drop();
});

test('the admin API lists every kind with its default period and where traces go (host only)', async () => {
  const r = await call(s.url, 'GET', '/retention', { auth: token });
  assert.is(r.status, 200);
  const days = Object.fromEntries(r.body.kinds.map((k: { kind: string; days: unknown }) => [k.kind, k.days]));
  assert.equal(days, {
    password_resets: 'expired', budget_holds: 30, budget_alerts: 396, spans: 30, usage_records: 396, refusal_counts: 396,
    conversations: null, conversation_history: 'expired', tool_calls: 90, tool_signins: 'expired', audit_entries: 396, ...(days.recordings !== undefined ? { recordings: 7 } : {}),
  });
  assert.equal(r.body.trace_export, { enabled: true, host: 'collector.example.net:4318' });
  assert.ok(r.body.schedule.startsWith('17 3 * * *') || r.body.schedule === ' (UTC)');
  assert.not.ok(r.text.includes('canary-otlp-token'));
  assert.is(r.body.last_run, null);
});

test('only instance admins; bad periods are refused naming the field', async () => {
  const member = await newPerson(s.url, token, 'member@example.test');
  assert.is((await call(s.url, 'GET', '/retention', { auth: member.token })).status, 403);
  assert.is((await call(s.url, 'POST', '/retention/runs', { auth: member.token })).body.error.code, 'forbidden');
  const bad = async (periods: Record<string, unknown>, param: string) => {
    const r = await call(s.url, 'PUT', '/retention/periods', { auth: token, body: { periods } });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, 'invalid_request');
    assert.is(r.body.error.param, param);
  };
  await bad({ nothing: 3 }, 'periods.nothing');
  await bad({ spans: null }, 'periods.spans');
  await bad({ password_resets: 5 }, 'periods.password_resets');
  await bad({ usage_records: 10 }, 'periods.usage_records');
  await bad({ spans: 0 }, 'periods.spans');
});

test('a run at the fake clock deletes exactly what is past each period; running totals stay', async () => {
  const person = (await store(s).execute<{ id: string }>('select id from identity_persons limit 1'))[0]!.id;
  await insert(s, 'spans', span('old-span', ago(31)));
  await insert(s, 'spans', span('new-span', ago(29)));
  await insert(s, 'usage_records', usage('u-old', ago(400)));
  await insert(s, 'usage_records', usage('u-new', ago(390)));
  await insert(s, 'budget_holds', hold('h-settled-old', 'settled', ago(31)));
  await insert(s, 'budget_holds', hold('h-refused-old', 'refused', ago(45)));
  await insert(s, 'budget_holds', hold('h-abandoned-old', 'abandoned', ago(31)));
  await insert(s, 'budget_holds', hold('h-settled-new', 'settled', ago(29)));
  await insert(s, 'budget_alerts', alert('a-sent-old', 'sent', ago(400)));
  await insert(s, 'budget_alerts', alert('a-given-up-old', 'given_up', ago(397)));
  await insert(s, 'budget_alerts', alert('a-sent-new', 'sent', ago(300)));
  await insert(s, 'budget_alerts', alert('a-pending-old', 'pending', ago(400)));
  await insert(s, 'identity_password_resets', { id: 'pr-expired', token_hash: 'h1', person_id: person, created_by: null, created_at: ago(2), expires_at: T - 1000 });
  await insert(s, 'identity_password_resets', { id: 'pr-live', token_hash: 'h2', person_id: person, created_by: null, created_at: ago(0), expires_at: T + 3_600_000 });
  await insert(s, 'conversations', conversation('c-ancient', ago(2000)));
  await insert(s, 'conversation_messages', message('m-ancient', 'c-ancient', ago(2000)));
  const toolCall = (id: string, at: number) => ({
    id, request_id: `r-${id}`, workspace_id: 'w', person_id: 'p', server_id: 's', tool: 't', arguments_bytes: 2,
    arguments_sha256: '0'.repeat(64), outcome: 'ok', duration_ms: 1, approval_id: null, created_at: at,
  });
  await insert(s, 'tool_calls', toolCall('tc-old', ago(91)));
  await insert(s, 'tool_calls', toolCall('tc-new', ago(89)));
  const signIn = (id: string, expiresAt: number) => ({ id, workspace_id: 'w', server_id: 's', person_id: 'p', verifier: 'sealed', flow: '{}', browser: null, created_at: ago(1), expires_at: expiresAt });
  await insert(s, 'tool_signins', signIn('ts-expired', T - 1));
  await insert(s, 'tool_signins', signIn('ts-live', T + 60_000));
  await insert(s, 'refusal_counts', { minute_start: ago(400), code: 'invalid_api_key', refusals: 12 });
  await insert(s, 'refusal_counts', { minute_start: ago(390), code: 'rate_limited', refusals: 3 });
  // A lifetime cap's running total: enforced from this row, never from usage records.
  await insert(s, 'budget_totals', { total_key: 'ws:w:lifetime:all', total_micro_usd: 987_654, updated_at: ago(500) });

  const run = await s.service.get(RetentionToken).run({ now });
  assert.ok(run);
  assert.is(run!.status, 'done');
  assert.equal(run!.counts, {
    ...run!.counts,
    spans: 1, usage_records: 1, refusal_counts: 1, budget_holds: 3, budget_alerts: 2, password_resets: 1, conversations: 0, conversation_history: 0, tool_calls: 1, tool_signins: 1,
  });
  assert.equal(await ids(s, 'spans', 'trace_id'), ['new-span']);
  assert.equal(await ids(s, 'usage_records'), ['u-new']);
  assert.equal(await ids(s, 'refusal_counts', 'code'), ['rate_limited']);
  assert.equal(await ids(s, 'budget_holds'), ['h-settled-new']);
  assert.equal(await ids(s, 'budget_alerts'), ['a-pending-old', 'a-sent-new']);
  assert.equal(await ids(s, 'identity_password_resets'), ['pr-live']);
  assert.equal(await ids(s, 'conversations'), ['c-ancient'], 'kept until deleted: no period is set');
  assert.equal(await ids(s, 'conversation_messages'), ['m-ancient']);
  assert.equal(await ids(s, 'tool_calls'), ['tc-new']);
  assert.equal(await ids(s, 'tool_signins'), ['ts-live']);
  const totals = await store(s).execute<{ t: number | string }>("select total_micro_usd as t from budget_totals where total_key = 'ws:w:lifetime:all'");
  assert.is(Number(totals[0]!.t), 987_654);
});

test('periods set by an admin apply; conversations go once a period is set; usage keeps the current and previous month', async () => {
  await insert(s, 'conversations', conversation('c-recent', ago(10)));
  await insert(s, 'conversation_messages', message('m-recent', 'c-recent', ago(500)));
  await insert(s, 'usage_records', usage('u-prev-month', Date.UTC(2027, 1, 10)));
  await insert(s, 'usage_records', usage('u-before-prev', Date.UTC(2027, 0, 20)));
  await insert(s, 'spans', span('span-8d', ago(8)));
  const set = await call(s.url, 'PUT', '/retention/periods', { auth: token, body: { periods: { conversations: 365, usage_records: 31, spans: 7 } } });
  assert.is(set.status, 200);
  const days = Object.fromEntries(set.body.kinds.map((k: { kind: string; days: unknown }) => [k.kind, k.days]));
  assert.is(days.conversations, 365);
  const run = await s.service.get(RetentionToken).run({ now });
  assert.is(run!.counts.conversations, 1);
  assert.is(run!.counts.conversation_history, 1, 'the removed conversation\'s history goes in the same run');
  assert.is(run!.counts.spans, 2); // new-span (29 d) and span-8d
  assert.equal(await ids(s, 'conversations'), ['c-recent'], 'last activity decides, not the age of its messages');
  assert.equal(await ids(s, 'conversation_messages'), ['m-recent']);
  // 31 days before 2027-03-30 is 2027-02-27, but February (the previous month) is kept whole.
  assert.equal(await ids(s, 'usage_records'), ['u-prev-month']);
});

test('Run now over HTTP runs at once and the last run shows its counts and duration', async () => {
  const r = await call(s.url, 'POST', '/retention/runs', { auth: token });
  assert.is(r.status, 200);
  assert.is(r.body.running_elsewhere, false);
  assert.is(r.body.run.trigger, 'manual');
  assert.is(r.body.run.status, 'done');
  assert.type(r.body.run.counts.spans, 'number');
  const view = await call(s.url, 'GET', '/retention', { auth: token });
  assert.is(view.body.last_run.id, r.body.run.id);
  assert.ok(view.body.last_run.duration_ms >= 0);
  assert.ok(s.logs.events('retention.finished').some((e) => e.run_id === r.body.run.id));
});

test('svc retention run runs the job and prints its counts', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  await new Service({
    env: backing.databaseUrl ? { SVC_RECOVERY_KEYS: testRecoveryKeys } : {},
    logSink: new MemorySink(),
    overrides: {
      dataDir: backing.dataDir,
      database: backing.databaseUrl ? { url: backing.databaseUrl } : {},
      cache: backing.redisUrl ? { url: backing.redisUrl, prefix: backing.redisPrefix } : {},
      plugins: { retention: { config: { schedule: '' } } },
    },
  }).runCommand(['retention', 'run'], out);
  const run = JSON.parse(text) as { trigger: string; status: string; counts: Record<string, number> };
  assert.is(run.trigger, 'command');
  assert.is(run.status, 'done');
  assert.type(run.counts.tool_calls, 'number');
});

test('while a run holds the lock, Run now reports it instead of running a second one', async () => {
  const cache = s.service.get(CacheToken);
  assert.ok(await cache.setIfAbsent('retention:lock', 'elsewhere', 60_000));
  try {
    const r = await call(s.url, 'POST', '/retention/runs', { auth: token });
    assert.is(r.status, 200);
    assert.equal(r.body, { run: null, running_elsewhere: true });
    assert.ok(s.logs.events('retention.skipped').some((e) => e.reason === 'running_elsewhere'));
  } finally {
    await cache.del('retention:lock');
  }
  assert.is((await call(s.url, 'POST', '/retention/runs', { auth: token })).body.running_elsewhere, false);
});

test.run();
