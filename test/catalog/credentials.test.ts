import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogToken, StoreToken, isGatewayError } from '../../kernel/index.js';
import type { Service } from '../../kernel/lifecycle/service.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { newService, recoveryKey, runCommand, startCatalog } from './support/setup.js';
import { ModelsUpstream } from './support/upstream.js';

type Err = { error: { message: string; type: string; param: string | null; code: string } };

const test = suite(`catalog credentials (${shape})`);
const upstream = new ModelsUpstream('sk-upstream-key');
const backings: Backing[] = [];

async function fresh(): Promise<Backing> {
  const b = await createBacking();
  backings.push(b);
  return b;
}

test.before(async () => {
  await upstream.start();
});
test.after(async () => {
  await upstream.stop();
  for (const b of backings) await b.drop();
});

async function storedKeys(svc: { service: Service }): Promise<Record<string, string | null>> {
  const rows = await svc.service.get(StoreToken).execute<{ name: string; api_key_enc: string | null }>('select name, api_key_enc from catalog_providers order by name');
  return Object.fromEntries(rows.map((r) => [r.name, r.api_key_enc]));
}

function keyUnavailable(r: { status: number; body: unknown }): void {
  assert.is(r.status, 500, JSON.stringify(r.body));
  assert.is((r.body as Err).error.code, 'credential_key_unavailable');
  assert.is((r.body as Err).error.type, 'server_error');
}

test('a canary provider key never appears in responses, logs, or the database in plaintext', async () => {
  const canary = `sk-canary-${randomBytes(12).toString('hex')}`;
  const canary2 = `sk-canary-${randomBytes(12).toString('hex')}`;
  const svc = await startCatalog(await fresh());
  try {
    const texts: string[] = [];
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await svc.admin.call(method, path, body);
      texts.push(JSON.stringify(r.body), JSON.stringify([...r.headers]));
      return r;
    };
    assert.is((await call('POST', '/providers', { name: 'canary', address: upstream.address, api_key: canary })).status, 201);
    await call('GET', '/providers');
    await call('GET', '/providers/canary');
    await call('POST', '/providers/canary/check');
    await call('PATCH', '/providers/canary', { api_key: canary2 });
    await call('PATCH', '/providers/canary', { api_key: '' });
    await call('POST', '/providers', { name: 'canary', address: upstream.address, api_key: canary });
    await call('POST', '/providers', { name: 'openai', address: upstream.address, api_key: canary });
    await call('POST', '/providers', { name: 'bad-address', address: 'nope', api_key: canary });
    texts.push(await (await fetch(`${svc.url}/healthz`)).text());
    texts.push(await (await fetch(`${svc.url}/admin/v1/openapi.json`)).text());
    assert.is(svc.service.get(CatalogToken).providerKey('canary'), canary2);
    for (const secret of [canary, canary2, Buffer.from(canary).toString('base64')]) {
      for (const t of texts) assert.not.ok(t.includes(secret), 'a response holds the key');
      assert.not.ok(svc.logs.text.includes(secret), 'the logs hold the key');
    }
    const rows = await svc.service.get(StoreToken).execute('select * from catalog_providers');
    const dump = JSON.stringify(rows);
    for (const secret of [canary, canary2, Buffer.from(canary2).toString('base64'), Buffer.from(canary2).toString('hex')]) assert.not.ok(dump.includes(secret));
    const stored = (await storedKeys(svc)).canary!;
    assert.match(stored, /^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]{22}==:[A-Za-z0-9+/=]+$/);
  } finally {
    await svc.stop();
  }
});

if (shape === 'embedded') {
  test('embedded without SVC_RECOVERY_KEYS: a key is generated once into <dataDir>/recovery-keys (0600) and reused after restart', async () => {
    const backing = await fresh();
    const first = await startCatalog(backing);
    const file = join(backing.dataDir, 'recovery-keys');
    try {
      assert.is(statSync(file).mode & 0o777, 0o600);
      assert.match(readFileSync(file, 'utf8'), /^v1:[A-Za-z0-9+/]{43}=\n$/);
      assert.is(first.logs.events('catalog.recovery_key_created')[0]?.version, 'v1');
      await first.admin.ok('POST', '/providers', { name: 'kept', address: upstream.address, api_key: 'sk-upstream-key' });
    } finally {
      await first.stop();
    }
    const content = readFileSync(file, 'utf8');
    const second = await startCatalog(backing);
    try {
      assert.is(readFileSync(file, 'utf8'), content);
      assert.is(second.logs.events('catalog.recovery_key_created').length, 0);
      assert.is(second.service.get(CatalogToken).providerKey('kept'), 'sk-upstream-key');
      const checked = await second.admin.call<{ check: string }>('POST', '/providers/kept/check');
      assert.is(checked.body.check, 'connected');
    } finally {
      await second.stop();
    }
  });
}

if (shape === 'scale-out') {
  test('scale-out without SVC_RECOVERY_KEYS: storing a key is 500 credential_key_unavailable and saves nothing; providers without a key work', async () => {
    const svc = await startCatalog(await fresh(), { SVC_RECOVERY_KEYS: '' });
    try {
      const r = await svc.admin.call<Err>('POST', '/providers', { name: 'needs-key', address: upstream.address, api_key: 'sk-upstream-key' });
      keyUnavailable(r);
      assert.match(r.body.error.message, /SVC_RECOVERY_KEYS/);
      assert.is((await svc.admin.call('GET', '/providers/needs-key')).status, 404);
      const open = await svc.admin.call<{ has_key: boolean }>('POST', '/providers', { name: 'open', address: upstream.address });
      assert.is(open.status, 201);
      assert.is(open.body.has_key, false);
    } finally {
      await svc.stop();
    }
  });
}

test('rotation: v1 → v2 with `svc admin rotate-credentials`, then v1 can be dropped; a missing version is 500 where the key is used', async () => {
  const backing = await fresh();
  const v1 = recoveryKey('v1');
  const v2 = recoveryKey('v2');
  const one = await startCatalog(backing, { SVC_RECOVERY_KEYS: v1 });
  try {
    await one.admin.ok('POST', '/providers', { name: 'alpha', address: upstream.address, api_key: 'sk-upstream-key' });
    await one.admin.ok('POST', '/providers', { name: 'beta', address: upstream.address, api_key: 'sk-beta' });
    await one.admin.ok('POST', '/providers', { name: 'no-key', address: upstream.address });
    const keys = await storedKeys(one);
    assert.ok(keys.alpha!.startsWith('v1:') && keys.beta!.startsWith('v1:'));
    assert.is(keys['no-key'], null);
  } finally {
    await one.stop();
  }

  // Only v2 given: the v1 credentials cannot be used; everything else still works.
  const missing = await startCatalog(backing, { SVC_RECOVERY_KEYS: v2 });
  try {
    keyUnavailable(await missing.admin.call('POST', '/providers/alpha/check'));
    keyUnavailable(await missing.admin.call('PATCH', '/providers/alpha', { address: upstream.address }));
    let thrown: unknown;
    try {
      missing.service.get(CatalogToken).providerKey('alpha');
    } catch (err) {
      thrown = err;
    }
    assert.ok(isGatewayError(thrown) && thrown.code === 'credential_key_unavailable' && thrown.status === 500);
    assert.is((await missing.admin.ok<{ has_key: boolean }>('GET', '/providers/alpha')).has_key, true);
    assert.is((await missing.admin.call('POST', '/providers/no-key/check')).status, 200);
    // Giving the key again repairs a provider without the old version.
    const repaired = await missing.admin.call<{ has_key: boolean }>('PATCH', '/providers/beta', { api_key: 'sk-beta' });
    assert.is(repaired.status, 200);
    assert.ok((await storedKeys(missing)).beta!.startsWith('v2:'));
    assert.is(missing.service.get(CatalogToken).providerKey('beta'), 'sk-beta');
    assert.not.ok(missing.logs.text.includes('sk-upstream-key'));
  } finally {
    await missing.stop();
  }

  const rotated = await runCommand(backing, ['admin', 'rotate-credentials'], { SVC_RECOVERY_KEYS: `${v2},${v1}` });
  assert.is(rotated.out, 'rotate-credentials: 1 re-encrypted to version v2, 1 already on it, 0 need a version this process was not given\n');
  assert.equal(rotated.logs.events('catalog.credentials_rotated').map((e) => [e.rotated, e.current, e.unreadable, e.version]), [[1, 1, 0, 'v2']]);
  const again = await runCommand(backing, ['admin', 'rotate-credentials'], { SVC_RECOVERY_KEYS: `${v2},${v1}` });
  assert.match(again.out, /0 re-encrypted to version v2, 2 already on it/);

  const two = await startCatalog(backing, { SVC_RECOVERY_KEYS: v2 });
  try {
    const keys = await storedKeys(two);
    assert.ok(keys.alpha!.startsWith('v2:') && keys.beta!.startsWith('v2:'));
    assert.is(two.service.get(CatalogToken).providerKey('beta'), 'sk-beta');
    const hits = upstream.hits();
    const checked = await two.admin.call<{ check: string }>('POST', '/providers/alpha/check');
    assert.is(checked.body.check, 'connected');
    assert.is(upstream.hits(), hits + 1);
    assert.is(upstream.seen.at(-1)?.authorization, 'Bearer sk-upstream-key');
  } finally {
    await two.stop();
  }

  // A version nobody gave: the command reports what it could not read and exits non-zero.
  const v3 = recoveryKey('v3');
  const failed = await runCommand(backing, ['admin', 'rotate-credentials'], { SVC_RECOVERY_KEYS: v3 }).catch((err: Error & { out?: string }) => err);
  assert.instance(failed, Error);
  assert.match((failed as Error).message, /2 stored provider key\(s\) need a recovery key version/);
  assert.match((failed as Error & { out: string }).out, /0 re-encrypted to version v3, 0 already on it, 2 need a version/);
});

test('SVC_RECOVERY_KEY_VERSION picks the version for new writes; others still read', async () => {
  const backing = await fresh();
  const v1 = recoveryKey('v1');
  const v2 = recoveryKey('v2');
  const svc = await startCatalog(backing, { SVC_RECOVERY_KEYS: `${v1},${v2}`, SVC_RECOVERY_KEY_VERSION: 'v2' });
  try {
    await svc.admin.ok('POST', '/providers', { name: 'pinned', address: upstream.address, api_key: 'sk-upstream-key' });
    assert.ok((await storedKeys(svc)).pinned!.startsWith('v2:'));
  } finally {
    await svc.stop();
  }
});

test('bad recovery key settings stop start-up with a message that shows no key material', async () => {
  const backing = await fresh();
  const good = recoveryKey('v1');
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ SVC_RECOVERY_KEYS: 'v1:c2hvcnQ=' }, /SVC_RECOVERY_KEYS: version v1 is not 32 bytes/],
    [{ SVC_RECOVERY_KEYS: 'nocolon' }, /SVC_RECOVERY_KEYS: entry 1 must look like/],
    [{ SVC_RECOVERY_KEYS: `${good},${good}` }, /version v1 is listed twice/],
    [{ SVC_RECOVERY_KEYS: good, SVC_RECOVERY_KEY_VERSION: 'v9' }, /SVC_RECOVERY_KEY_VERSION: version v9 is not among/],
  ];
  for (const [env, message] of cases) {
    const { service } = newService(backing, env);
    let err: unknown;
    try {
      await service.start();
    } catch (e) {
      err = e;
    } finally {
      await service.stop();
    }
    assert.match((err as Error)?.message ?? '', message);
    assert.not.ok((err as Error).message.includes(good.slice(3)));
  }
});

test.run();
