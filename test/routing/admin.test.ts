import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { Admin } from '../support/provision.js';
import { member, models, routingHeaders, startRoutingWorld, type RoutingWorld } from './support.js';

const test = suite(`routing: routes and settings in the admin API, GET /v1/models (${shape})`);
let w: RoutingWorld;

test.before(async () => {
  w = await startRoutingWorld();
});
test.after(async () => w?.stop());

const stamp = (v: Record<string, unknown>) => ({ ...v, created_at: typeof v.created_at, updated_at: typeof v.updated_at });

test('routes: create, read, list, change, remove; the exact view', async () => {
  const created = await w.ws('POST', '/routes', {
    name: 'sql', model: models.general, fallbacks: [models.writer], description: 'Questions about databases and SQL queries',
    examples: ['Write a query that joins orders and customers', 'Why is this index not used?'], confidence_threshold: 0.7,
  });
  assert.is(created.status, 201);
  const view = {
    name: 'sql', model: models.general, fallbacks: [models.writer], description: 'Questions about databases and SQL queries',
    examples: ['Write a query that joins orders and customers', 'Why is this index not used?'], enabled: true,
    confidence_threshold: 0.7, margin: null, min_chars: null, needs_model: false, missing_models: [], created_at: 'string', updated_at: 'string',
  };
  assert.equal(stamp(created.body), view);
  assert.equal(stamp((await w.ws('GET', '/routes/sql')).body), view);
  const changed = await w.ws('PATCH', '/routes/sql', { enabled: false, margin: 0.1, fallbacks: [] });
  assert.equal(stamp(changed.body), { ...view, enabled: false, margin: 0.1, fallbacks: [] });
  await w.ws('POST', '/routes', { name: 'alpha', model: models.writer });
  const list = await w.ws('GET', '/routes');
  assert.equal(list.body.data.map((r: { name: string }) => r.name), ['alpha', 'sql']);
  const gone = await w.ws('DELETE', '/routes/alpha');
  assert.is(gone.status, 204);
  const missing = await w.ws('GET', '/routes/alpha');
  assert.equal([missing.status, missing.body.error.code], [404, 'not_found']);
  await w.ws('DELETE', '/routes/sql');
});

test('routes: validation names the field (unknown model or fallback, bad or taken name, unknown code route)', async () => {
  const bad = async (method: string, path: string, body: unknown) => {
    const r = await w.ws(method, path, body);
    return [r.status, r.body.error?.code, r.body.error?.param];
  };
  assert.equal(await bad('POST', '/routes', { name: 'x', model: 'local:nope' }), [400, 'invalid_request', 'model']);
  assert.equal(await bad('POST', '/routes', { name: 'x', model: models.general, fallbacks: [models.writer, 'local:nope'] }), [400, 'invalid_request', 'fallbacks.1']);
  assert.equal(await bad('POST', '/routes', { name: 'Has Space', model: models.general }), [400, 'invalid_request', 'name']);
  assert.equal(await bad('POST', '/routes', { name: 'x', model: models.general, confidence_threshold: 1.5 }), [400, 'invalid_request', 'confidence_threshold']);
  await w.ws('POST', '/routes', { name: 'x', model: models.general });
  assert.equal(await bad('POST', '/routes', { name: 'x', model: models.general }), [400, 'invalid_request', 'name']);
  assert.equal(await bad('PATCH', '/routing', { code_route: 'nope' }), [404, 'not_found', 'code_route']);
  assert.equal(await bad('PATCH', '/routing', { default_model: 'local:nope' }), [400, 'invalid_request', 'default_model']);
  await w.ws('DELETE', '/routes/x');
});

test('settings: read and change; defaults before any change', async () => {
  assert.equal((await w.ws('GET', '/routing')).body, { default_model: null, pinned_model: null, routing_enabled: true, code_route: null, needs_model: false, missing_models: [] });
  await w.ws('POST', '/routes', { name: 'code', model: models.coder });
  const r = await w.ws('PATCH', '/routing', { default_model: models.general, code_route: 'code', routing_enabled: false });
  assert.equal(r.body, { default_model: models.general, pinned_model: null, routing_enabled: false, code_route: 'code', needs_model: false, missing_models: [] });
  assert.equal((await w.ws('GET', '/routing')).body, r.body);
  await w.ws('PATCH', '/routing', { routing_enabled: true });
});

test('access: workspace admins only; a member or a member\'s key gets 403, another workspace 404', async () => {
  const m = await member(w, 'routing-member@example.test');
  const asMember = await m.admin.call<any>('GET', `/workspaces/${w.workspaceId}/routes`);
  assert.equal([asMember.status, asMember.body.error.code], [403, 'forbidden']);
  const asKey = await new Admin(w.svc.url, m.key).call<any>('POST', `/workspaces/${w.workspaceId}/routes`, { name: 'k', model: models.general });
  assert.equal([asKey.status, asKey.body.error.code], [403, 'forbidden']);
  const other = await w.admin.workspace();
  const foreign = await new Admin(w.svc.url, w.apiKey).call<any>('GET', `/workspaces/${other}/routes`);
  assert.equal([foreign.status, foreign.body.error.code], [404, 'not_found']);
  const doc = (await (await fetch(`${w.svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const path of ['/workspaces/{workspaceId}/routes', '/workspaces/{workspaceId}/routes/{name}', '/workspaces/{workspaceId}/routing']) {
    assert.ok(Object.keys(doc.paths).some((p) => p.endsWith(path)), `${path} in the OpenAPI document`);
  }
});

test('GET /v1/models: auto, then each enabled route of the caller\'s workspace in name order, then the models', async () => {
  await w.ws('POST', '/routes', { name: 'writing', model: models.writer, description: 'Prose' });
  await w.ws('POST', '/routes', { name: 'hidden', model: models.writer, enabled: false });
  const other = await w.admin.workspace();
  await w.admin.ok('POST', `/workspaces/${other}/routes`, { name: 'elsewhere', model: models.general });
  const ids = [];
  for await (const m of w.client.models.list()) ids.push(m.id);
  assert.equal(ids, ['auto', 'route/code', 'route/writing', ...Object.values(models).sort()]);
});

test('a removed model leaves the routes that named it flagged; the route serves from what is left', async () => {
  await w.admin.model('local:doomed');
  await w.ws('POST', '/routes', { name: 'doomed', model: 'local:doomed', fallbacks: [models.general] });
  await w.admin.ok('DELETE', `/models/${encodeURIComponent('local:doomed')}?confirm=local:doomed`);
  const r = await w.ws('GET', '/routes/doomed');
  assert.equal([r.body.needs_model, r.body.missing_models], [true, ['local:doomed']]);
  const flagged = (await w.ws('GET', '/routes')).body.data.filter((x: { needs_model: boolean }) => x.needs_model).map((x: { name: string }) => x.name);
  assert.equal(flagged, ['doomed']);
  const reply = await w.ask('route/doomed', 'Anything at all, please');
  assert.equal([routingHeaders(reply.headers)['x-svc-model'], reply.headers.get('x-svc-route')], [models.general, 'doomed']);
  // With nothing left it refuses, naming the route, rather than sending elsewhere.
  await w.ws('PATCH', '/routes/doomed', { fallbacks: [] });
  await w.admin.model('local:doomed');
  await w.ws('PATCH', '/routes/doomed', { model: 'local:doomed' });
  await w.admin.ok('DELETE', `/models/${encodeURIComponent('local:doomed')}?confirm=local:doomed`);
  const refused = await fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'route/doomed', messages: [{ role: 'user', content: 'hello' }] }),
  });
  const body = (await refused.json()) as { error: { code: string; message: string } };
  assert.equal([refused.status, body.error.code], [404, 'model_not_found']);
  assert.match(body.error.message, 'route/doomed');
});

test.run();
