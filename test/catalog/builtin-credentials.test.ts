import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CatalogToken, StoreToken, isGatewayError } from '../../kernel/index.js';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { recoveryKey, runCommand, startCatalog } from './support/setup.js';
import { ModelsUpstream } from './support/upstream.js';

const test = suite(`catalog built-in keys at rest (${shape})`);
const upstream = new ModelsUpstream('sk-upstream-key');
let backing: Backing;

test.before(async () => {
  [backing] = await Promise.all([createBacking(), upstream.start()]);
});
test.after(async () => {
  await Promise.all([backing.drop(), upstream.stop()]);
});

test('built-in keys (instance-wide and a workspace\'s own) are encrypted at rest, bound to their row, and rotated by the command', async () => {
  const v1 = recoveryKey('v1');
  const v2 = recoveryKey('v2');
  const local = { plugins: { catalog: { config: { builtInAddresses: { openai: upstream.address } } } } };
  const one = await startCatalog(backing, { SVC_RECOVERY_KEYS: v1 }, local);
  let ws: string;
  try {
    ws = await one.admin.workspace();
    await one.admin.ok('PATCH', '/providers/openai', { api_key: 'sk-upstream-key' });
    await one.admin.ok('PUT', `/workspaces/${ws}/provider-keys/openai`, { api_key: 'sk-workspace-own' });
    const rows = await one.service.get(StoreToken).execute<{ workspace_id: string; api_key_enc: string }>('select workspace_id, api_key_enc from catalog_builtin_keys order by workspace_id');
    assert.is(rows.length, 2);
    assert.ok(rows.every((r) => r.api_key_enc.startsWith('v1:') && !r.api_key_enc.includes('sk-')));
    // Swapping the ciphertexts between rows does not open them: each is bound to its provider and workspace.
    await one.service.get(StoreToken).execute('update catalog_builtin_keys set api_key_enc = ? where workspace_id = ?', [rows[1]!.api_key_enc, '']);
    const catalog = one.service.get(CatalogToken);
    await one.admin.ok('POST', '/providers/openai/check').catch(() => undefined);
    let thrown: unknown;
    try {
      catalog.providerKey('openai');
    } catch (err) {
      thrown = err;
    }
    assert.ok(isGatewayError(thrown) && thrown.code === 'credential_key_unavailable');
    await one.admin.ok('PATCH', '/providers/openai', { api_key: 'sk-upstream-key' });
    assert.is(catalog.providerKey('openai'), 'sk-upstream-key');
    assert.not.ok(one.logs.text.includes('sk-workspace-own'));
  } finally {
    await one.stop();
  }
  const rotated = await runCommand(backing, ['admin', 'rotate-credentials'], { SVC_RECOVERY_KEYS: `${v2},${v1}` });
  assert.match(rotated.out, /2 re-encrypted to version v2/);
  const two = await startCatalog(backing, { SVC_RECOVERY_KEYS: v2 }, local);
  try {
    const catalog = two.service.get(CatalogToken);
    assert.is(catalog.providerKey('openai'), 'sk-upstream-key');
    assert.is(catalog.providerKey('openai', ws!), 'sk-workspace-own');
  } finally {
    await two.stop();
  }
});

test.run();
