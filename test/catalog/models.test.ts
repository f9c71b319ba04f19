import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogToken } from '../../kernel/index.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import type { Admin } from '../support/provision.js';
import { startCatalog, type CatalogService } from './support/setup.js';
import { ModelsUpstream } from './support/upstream.js';

type Err = { error: { message: string; type: string; param: string | null; code: string } };
type ModelBody = Record<string, unknown> & { name: string };

const test = suite(`catalog models (${shape})`);
let backing: Backing;
let svc: CatalogService;
let admin: Admin;
const upstream = new ModelsUpstream();

const base = { context_window: 8192, output_limit: 2048, input_price: '0.15', output_price: 0.6 };
const path = (name: string): string => `/models/${encodeURIComponent(name)}`;

test.before(async () => {
  await upstream.start();
  backing = await createBacking();
  svc = await startCatalog(backing);
  admin = svc.admin;
  await admin.ok('POST', '/providers', { name: 'local', address: upstream.address });
  await admin.ok('POST', '/providers', { name: 'hf', address: upstream.address });
});
test.after(async () => {
  await svc.stop();
  await backing.drop();
  await upstream.stop();
});

function isError(r: { status: number; body: unknown }, status: number, code: string, param: string | null): void {
  assert.is(r.status, status, JSON.stringify(r.body));
  assert.is((r.body as Err).error.code, code);
  assert.is((r.body as Err).error.param, param);
}

test('add: 201 with exact prices in micro-USD per million tokens; display name made from the id', async () => {
  const r = await admin.call<ModelBody>('POST', '/models', { name: 'local:llama3:8b-instruct-q4_K_M', ...base, can_call_tools: true });
  assert.is(r.status, 201, JSON.stringify(r.body));
  const { created_at, updated_at, ...rest } = r.body;
  assert.ok(typeof created_at === 'string' && typeof updated_at === 'string');
  assert.equal(rest, {
    name: 'local:llama3:8b-instruct-q4_K_M',
    provider: 'local',
    model_id: 'llama3:8b-instruct-q4_K_M',
    display_name: 'llama3:8b-instruct-q4_K_M',
    context_window: 8192,
    output_limit: 2048,
    input_price: '0.15',
    output_price: '0.60',
    input_micro_usd_per_mtok: 150000,
    output_micro_usd_per_mtok: 600000,
    can_read_images: false,
    can_read_pdf: false,
    can_call_tools: true,
    provider_missing: false,
  });
  const m = svc.service.get(CatalogToken).model('local:llama3:8b-instruct-q4_K_M');
  assert.equal(
    { provider: m?.provider, upstreamId: m?.upstreamId, input: m?.inputMicroUsdPerMTok, output: m?.outputMicroUsdPerMTok, tools: m?.canCallTools, images: m?.canReadImages },
    { provider: 'local', upstreamId: 'llama3:8b-instruct-q4_K_M', input: 150000, output: 600000, tools: true, images: false },
  );
});

test('prices: numbers and strings converted exactly; 0 allowed; >6 decimals and negative refused', async () => {
  const cases: Array<[unknown, number]> = [
    [2.5, 2_500_000], ['2.50', 2_500_000], [0.1, 100_000], ['0.000001', 1], [0.000001, 1], [1e-6, 1], [0, 0], ['0.00', 0],
    [75, 75_000_000], ['1.1', 1_100_000], [0.29, 290_000], ['3.0000000', 3_000_000], [1234.567891, 1_234_567_891],
  ];
  let i = 0;
  for (const [price, micro] of cases) {
    const name = `local:price-${i++}`;
    const r = await admin.call<ModelBody>('POST', '/models', { ...base, name, input_price: price, output_price: price });
    assert.is(r.status, 201, `${String(price)}: ${JSON.stringify(r.body)}`);
    assert.is(r.body.input_micro_usd_per_mtok, micro, String(price));
    assert.is(svc.service.get(CatalogToken).model(name)?.outputMicroUsdPerMTok, micro);
  }
  for (const [param, price] of [['input_price', '0.0000001'], ['output_price', 1e-7], ['input_price', -1], ['output_price', '-0.5'], ['input_price', 'abc'], ['input_price', ''], ['output_price', '1,5']] as const) {
    const r = await admin.call<Err>('POST', '/models', { ...base, name: 'local:bad-price', [param]: price });
    isError(r, 400, 'invalid_request', param);
  }
  const neg = await admin.call<Err>('POST', '/models', { ...base, name: 'local:bad-price', input_price: -2 });
  assert.match(neg.body.error.message, /negative/);
  const precise = await admin.call<Err>('POST', '/models', { ...base, name: 'local:bad-price', input_price: '0.1234567' });
  assert.match(precise.body.error.message, /6 decimals/);
  for (const param of ['input_price', 'output_price']) {
    const { [param as 'input_price']: _dropped, ...without } = base;
    isError(await admin.call('POST', '/models', { ...without, name: 'local:bad-price' }), 400, 'invalid_request', param);
  }
  assert.is(svc.service.get(CatalogToken).model('local:bad-price'), undefined);
});

test('limits: integer tokens > 0; output limit at most the context window', async () => {
  for (const [param, value] of [['context_window', 0], ['context_window', 2.5], ['output_limit', -1], ['output_limit', 'many']] as const) {
    isError(await admin.call('POST', '/models', { ...base, name: 'local:bad-limit', [param]: value }), 400, 'invalid_request', param);
  }
  const over = await admin.call<Err>('POST', '/models', { ...base, name: 'local:bad-limit', context_window: 1000, output_limit: 1001 });
  isError(over, 400, 'invalid_request', 'output_limit');
  const equal = await admin.call('POST', '/models', { ...base, name: 'local:equal-limit', context_window: 1000, output_limit: 1000 });
  assert.is(equal.status, 201);
});

test('name: <provider>:<id> split at the first colon; provider must exist; unique', async () => {
  for (const name of ['nocolon', ':id', 'local:', 'Local:x', 'local:has space']) {
    isError(await admin.call('POST', '/models', { ...base, name }), 400, 'invalid_request', 'name');
  }
  const missing = await admin.call<Err>('POST', '/models', { ...base, name: 'nobody:model' });
  isError(missing, 400, 'invalid_request', 'name');
  assert.match(missing.body.error.message, /no provider named "nobody"/);
  isError(await admin.call('POST', '/models', { ...base, name: 'local:llama3:8b-instruct-q4_K_M' }), 400, 'invalid_request', 'name');
  const long = await admin.call<ModelBody>('POST', '/models', { ...base, name: `local:${'a'.repeat(300)}` });
  assert.is(long.status, 201);
  assert.is(long.body.display_name, 'a'.repeat(300));
  isError(await admin.call('POST', '/models', { ...base, name: `local:${'a'.repeat(301)}` }), 400, 'invalid_request', 'name');
});

test('a name with slashes and colons is addressed URL-encoded in one path segment: get, edit, remove', async () => {
  const name = 'hf:meta-llama/Llama-3.1-8B-Instruct:free';
  const added = await admin.call<ModelBody>('POST', '/models', { ...base, name, display_name: '  Llama 3.1 8B  ', can_read_images: true, can_read_pdf: true });
  assert.is(added.status, 201);
  assert.is(added.body.model_id, 'meta-llama/Llama-3.1-8B-Instruct:free');
  assert.is(added.body.display_name, 'Llama 3.1 8B');
  const got = await admin.call<ModelBody>('GET', path(name));
  assert.is(got.status, 200);
  assert.equal(got.body, added.body);
  const edited = await admin.call<ModelBody>('PATCH', path(name), { input_price: '1.25', output_limit: 4096, can_read_pdf: false, display_name: '' });
  assert.is(edited.status, 200, JSON.stringify(edited.body));
  assert.is(edited.body.input_micro_usd_per_mtok, 1_250_000);
  assert.is(edited.body.output_micro_usd_per_mtok, 600_000);
  assert.is(edited.body.output_limit, 4096);
  assert.is(edited.body.can_read_pdf, false);
  assert.is(edited.body.can_read_images, true);
  assert.is(edited.body.display_name, 'meta-llama/Llama-3.1-8B-Instruct:free');
  const m = svc.service.get(CatalogToken).model(name);
  assert.equal([m?.inputMicroUsdPerMTok, m?.outputLimit, m?.canReadPdf], [1_250_000, 4096, false]);
  isError(await admin.call('DELETE', path(name)), 400, 'invalid_request', 'confirm');
  isError(await admin.call('DELETE', `${path(name)}?confirm=${encodeURIComponent('hf:meta-llama')}`), 400, 'invalid_request', 'confirm');
  const removed = await admin.call('DELETE', `${path(name)}?confirm=${encodeURIComponent(name)}`);
  assert.is(removed.status, 200);
  assert.equal(removed.body, { name, removed: true });
  isError(await admin.call('GET', path(name)), 404, 'not_found', null);
  assert.is(svc.service.get(CatalogToken).model(name), undefined);
});

test('edit: everything but the name; limits checked against the merged values', async () => {
  const name = 'local:edit-me';
  await admin.ok('POST', '/models', { ...base, name });
  isError(await admin.call('PATCH', path(name), { name: 'local:renamed' }), 400, 'invalid_request', 'name');
  assert.is((await admin.call('PATCH', path(name), { name })).status, 200);
  isError(await admin.call('PATCH', path(name), { context_window: 1024 }), 400, 'invalid_request', 'context_window');
  isError(await admin.call('PATCH', path(name), { output_limit: 9000 }), 400, 'invalid_request', 'output_limit');
  isError(await admin.call('PATCH', path(name), { output_price: '-1' }), 400, 'invalid_request', 'output_price');
  const ok = await admin.call<ModelBody>('PATCH', path(name), { context_window: 1024, output_limit: 512 });
  assert.equal([ok.body.context_window, ok.body.output_limit], [1024, 512]);
  isError(await admin.call('PATCH', path('local:nope'), { output_limit: 1 }), 404, 'not_found', null);
});

test('list: sorted by name, filter by provider', async () => {
  const all = await admin.ok<{ data: ModelBody[] }>('GET', '/models');
  const names = all.data.map((m) => m.name);
  assert.equal(names, [...names].sort());
  assert.ok(names.includes('local:llama3:8b-instruct-q4_K_M'));
  const hf = await admin.ok<{ data: ModelBody[] }>('GET', '/models?provider=hf');
  assert.ok(hf.data.every((m) => m.provider === 'hf'));
  // The snapshot also holds the built-in providers' catalogue models (GET /built-in-models lists those).
  const catalog = svc.service.get(CatalogToken);
  assert.equal(catalog.models().filter((m) => !catalog.provider(m.provider)?.builtIn).map((m) => m.name), names);
});

test('onChange listeners hear model and provider changes', async () => {
  const heard: Array<string | undefined> = [];
  svc.service.get(CatalogToken).onChange((p) => heard.push(p));
  await admin.ok('POST', '/models', { ...base, name: 'local:listened' });
  assert.equal(heard, [undefined]);
  await admin.ok('PATCH', '/providers/hf', { address: `${upstream.address}/` });
  assert.equal(heard, [undefined]);
  await admin.ok('PATCH', '/providers/hf', { api_key: 'sk-hf' });
  assert.equal(heard, [undefined, 'hf']);
});

test.run();
