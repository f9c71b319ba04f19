import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBacking } from '../support/harness.js';
import { MockUpstream, vendorError } from '../support/mock-upstream.js';
import { Admin } from '../support/provision.js';
import { client, eventually, newKey, personId, provision, startInstance, type Instance } from '../budgets/support.js';
import { usdFromMicro } from '../../plugins/budgets/usage-export.js';
import { csvObjects, fetchExport, jsonLines, parseCsv, sums, type Row } from './support.js';

const test = suite('export: spend export as CSV and JSON lines — exact sums against the usage page, filters, access');

interface Report {
  from: string;
  to: string;
  total: { cost_micro_usd: number; requests: number; prompt_tokens: number; completion_tokens: number };
  series: Array<{ date: string; cost_micro_usd: number; requests: number }>;
  groups?: Array<{ id: string | null; cost_micro_usd: number; requests: number; prompt_tokens: number; completion_tokens: number }>;
}
interface Env { svc: Instance; mock: MockUpstream; ws: string; other: string; k1: { id: string }; k2: { id: string }; drop(): Promise<void> }
let env: Env;
const today = new Date().toISOString().slice(0, 10);

test.before(async () => {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const svc = await startInstance(backing);
  // Prices that make charges with odd micro-dollars (3.33 × 1,234 tokens): exactness shows.
  await provision(svc.admin, mock, { big: { input: '3.33', output: '17.77' }, small: { input: '0.07', output: '0.29' } });
  const ws = await svc.admin.workspace();
  const other = await svc.admin.workspace();
  const k1 = await newKey(svc.admin, ws);
  const k2 = await newKey(svc.admin, ws);
  const k3 = await newKey(svc.admin, other);
  const ask = (key: string, model: string) => client(svc, key).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 600 });
  mock.enqueue({ reply: { content: 'a', usage: { prompt_tokens: 1234, completion_tokens: 321 } } });
  await ask(k1.value, 'mock:big');
  mock.enqueue({ reply: { content: 'b', usage: { prompt_tokens: 777, completion_tokens: 555 } } });
  await ask(k1.value, 'mock:small');
  mock.enqueue({ reply: { content: 'c', usage: { prompt_tokens: 4321, completion_tokens: 99 } } });
  await ask(k2.value, 'mock:big');
  // A refusal by the provider: a record with its status and error code, charged nothing.
  mock.enqueue({ error: vendorError('openai-content-filter') });
  await ask(k2.value, 'mock:small').catch(() => {});
  mock.enqueue({ reply: { content: 'd', usage: { prompt_tokens: 10, completion_tokens: 20 } } });
  await ask(k3.value, 'mock:big');
  await eventually(svc, async () => {
    const r = await svc.admin.ok<Report>('GET', '/spend');
    assert.is(r.total.requests, 5);
  });
  env = { svc, mock, ws, other, k1, k2, drop: async () => { await svc.stop(); await mock.stop(); await backing.drop(); } };
});
test.after(() => env.drop());

const get = (path: string) => fetchExport(env.svc.url, env.svc.admin.token, path);

/** The export in `format`, parsed; CSV values are strings, as a spreadsheet reads them. */
async function rows(path: string, format: 'csv' | 'jsonl'): Promise<Row[]> {
  const r = await get(`${path}${path.includes('?') ? '&' : '?'}format=${format}`);
  assert.is(r.status, 200, r.text);
  return format === 'csv' ? csvObjects(r.text) : jsonLines(r.text);
}

test('per request: one row per usage record, sums equal to the Usage page, exact dollars', async () => {
  const { ws, svc } = env;
  const report = await svc.admin.ok<Report>('GET', `/workspaces/${ws}/spend?group_by=model`);
  assert.is(report.total.requests, 4);
  for (const format of ['csv', 'jsonl'] as const) {
    const got = await rows(`/workspaces/${ws}/spend/export`, format);
    assert.equal(sums(got), report.total, `${format}: the page's totals`);
    for (const g of report.groups!) assert.equal(sums(got.filter((r) => r.model === g.id)), { cost_micro_usd: g.cost_micro_usd, requests: g.requests, prompt_tokens: g.prompt_tokens, completion_tokens: g.completion_tokens }, `${format}: ${g.id}`);
    for (const r of got) {
      assert.is(r.cost_usd, usdFromMicro(String(r.cost_micro_usd)), 'dollars are the micro-USD with six decimals');
      assert.is(String(r.created_at).slice(0, 10), today);
    }
    const refused = got.find((r) => r.error_code === 'content_filter')!;
    assert.equal([String(refused.status), String(refused.cost_micro_usd), refused.cost_usd, refused.provider], ['400', '0', '0.000000', 'mock']);
    // Oldest first: the order of the requests sent.
    assert.equal(got.map((r) => String(r.prompt_tokens)), ['1234', '777', '4321', '0']);
  }
  const [jsonRow] = await rows(`/workspaces/${ws}/spend/export`, 'jsonl');
  // 1,234 × 3.33 + 321 × 17.77 micro-USD, as the pricing rounds it (the Usage page's figure).
  assert.equal(Object.keys(jsonRow!), [
    'id', 'created_at', 'workspace_id', 'person_id', 'key_id', 'provider', 'model', 'status', 'error_code', 'stream', 'client_closed',
    'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'cost_micro_usd', 'cost_usd', 'latency_ms', 'ttft_ms',
  ]);
  assert.equal([jsonRow!.workspace_id, jsonRow!.key_id, jsonRow!.person_id, jsonRow!.model, jsonRow!.status, jsonRow!.stream], [ws, env.k1.id, await personId(svc.admin), 'mock:big', 200, false]);
  assert.is(typeof jsonRow!.cost_micro_usd, 'number');
  assert.ok(Number(jsonRow!.cost_micro_usd) > 9000 && Number(jsonRow!.cost_micro_usd) < 10_000, String(jsonRow!.cost_micro_usd));
});

test('per day: one row per day and workspace, person, key, provider, model; the same sums and daily series', async () => {
  const { ws, svc } = env;
  const report = await svc.admin.ok<Report>('GET', `/workspaces/${ws}/spend?group_by=key`);
  for (const format of ['csv', 'jsonl'] as const) {
    const got = await rows(`/workspaces/${ws}/spend/export?granularity=day`, format);
    assert.is(got.length, 4, 'k1 × 2 models, k2 × 2 models');
    assert.equal(sums(got, 'requests'), report.total);
    assert.equal(report.series.map((s) => [s.date, s.cost_micro_usd]), [[today, sums(got.filter((r) => r.date === today), 'requests').cost_micro_usd]]);
    for (const g of report.groups!) assert.is(sums(got.filter((r) => r.key_id === g.id), 'requests').cost_micro_usd, g.cost_micro_usd);
    assert.equal(got.filter((r) => String(r.errors) !== '0').map((r) => [r.key_id, r.model, String(r.errors)]), [[env.k2.id, 'mock:small', '1']]);
    for (const r of got) assert.is(r.cost_usd, usdFromMicro(String(r.cost_micro_usd)));
  }
  const r = await get(`/workspaces/${ws}/spend/export?granularity=day`);
  assert.is(parseCsv(r.text)[0]!.join(','), 'date,workspace_id,person_id,key_id,provider,model,requests,errors,prompt_tokens,completion_tokens,cached_tokens,reasoning_tokens,cost_micro_usd,cost_usd');
});

test('filters: workspace, person, key, model, provider give what the Usage page gives with the same filters', async () => {
  const { ws, other, svc, k2 } = env;
  const me = await personId(svc.admin);
  for (const filter of [`workspace_id=${ws}`, `workspace_id=${other}`, `person_id=${me}`, `key_id=${k2.id}`, 'model=mock:small', 'provider=mock', 'model=mock:nothing']) {
    const report = await svc.admin.ok<Report>('GET', `/spend?${filter}`);
    for (const granularity of ['request', 'day']) {
      const got = await rows(`/spend/export?${filter}&granularity=${granularity}`, 'csv');
      assert.equal(sums(got, granularity === 'day' ? 'requests' : undefined), report.total, `${filter} ${granularity}`);
    }
  }
  // The instance export filtered to one workspace is that workspace's export, byte for byte.
  const a = await get(`/spend/export?workspace_id=${ws}&format=jsonl`);
  const b = await get(`/workspaces/${ws}/spend/export?format=jsonl`);
  assert.is(a.text, b.text);
  // A period without records: only the header.
  const empty = await get(`/spend/export?from=2020-01-01&to=2020-12-31`);
  assert.is(empty.text, 'id,created_at,workspace_id,person_id,key_id,provider,model,status,error_code,stream,client_closed,prompt_tokens,completion_tokens,cached_tokens,reasoning_tokens,cost_micro_usd,cost_usd,latency_ms,ttft_ms\r\n');
});

test('headers, refusals and access', async () => {
  const { ws, other, svc } = env;
  const csv = await get(`/workspaces/${ws}/spend/export?from=${today}&to=${today}`);
  assert.is(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  assert.is(csv.headers.get('content-disposition'), `attachment; filename="svc-usage-${today}-to-${today}-request.csv"`);
  assert.is(csv.headers.get('cache-control'), 'no-store');
  const jsonl = await get(`/spend/export?granularity=day&format=jsonl&from=${today}&to=${today}`);
  assert.is(jsonl.headers.get('content-type'), 'application/jsonl; charset=utf-8');
  assert.is(jsonl.headers.get('content-disposition'), `attachment; filename="svc-usage-${today}-to-${today}-day.jsonl"`);
  for (const [query, param] of [['format=xml', 'format'], ['granularity=week', 'granularity'], ['from=yesterday', 'from'], ['from=2025-02-02&to=2025-02-01', 'to'], ['from=2025-02-30', 'from']] as const) {
    const bad = await get(`/spend/export?${query}`);
    assert.is(bad.status, 400, query);
    assert.equal([(JSON.parse(bad.text) as { error: { code: string; param: string } }).error.code, (JSON.parse(bad.text) as { error: { param: string } }).error.param], ['invalid_request', param], query);
  }
  await svc.admin.ok('POST', '/persons', { email: 'export-member@example.test', password: 'another long password' });
  await svc.admin.ok('POST', `/workspaces/${ws}/members`, { email: 'export-member@example.test', role: 'member' });
  const member = await Admin.signIn(svc.url, 'export-member@example.test', 'another long password');
  const asMember = (path: string) => fetchExport(svc.url, member.token, path);
  assert.is((await asMember('/spend/export')).status, 403);
  assert.is((await asMember(`/workspaces/${ws}/spend/export`)).status, 403, 'a member, not an admin');
  assert.is((await asMember(`/workspaces/${other}/spend/export`)).status, 404, 'a workspace the person cannot see');
  const anonymous = await fetch(`${svc.url}/admin/v1/spend/export`);
  assert.is(anonymous.status, 401);
  const anonymousWorkspace = await fetch(`${svc.url}/admin/v1/workspaces/${ws}/spend/export`);
  assert.is(anonymousWorkspace.status, 401);
  const doc = (await (await fetch(`${svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  assert.ok(doc.paths['/admin/v1/spend/export'] && doc.paths['/admin/v1/workspaces/{workspaceId}/spend/export']);
});

test.run();
