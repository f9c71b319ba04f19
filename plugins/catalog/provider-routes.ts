import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import type { CatalogCore } from './core.js';
import { checkProviderName, normalizeAddress } from './names.js';
import { keyContext } from './snapshot.js';
import type { ProviderRow } from './repo.js';
import { changeBuiltIn } from './builtin-address.js';
import { providerView, ProviderView } from './views.js';

/** Every admin-added provider speaks the Chat Completions format through this adapter. */
export const addedVendor = 'openai-compatible';

const tag = 'catalog';
const access = 'instance-admin' as const;
const Address = Type.String({ maxLength: 2000, description: 'API base including its path, without /chat/completions' });
const ApiKey = Type.String({ maxLength: 8192, description: 'Stored encrypted and never shown again; empty or absent means none (on change: keep the saved one).' });

function notFound(name: string): GatewayError {
  return new GatewayError('not_found', `No provider named "${name}".`);
}

/** An API key as given, or undefined for an empty field (`""`, whitespace). */
export function given(key: string | undefined): string | undefined {
  const k = key?.trim();
  return k ? k : undefined;
}

/** Admin endpoints for providers (SPEC.md "Provider", "Removal and change rules"); instance admins only. */
export function providerRoutes(admin: AdminApi, core: CatalogCore): void {
  const { repo, credentials, snapshot } = core;
  const builtIns = snapshot.builtIns;

  /** An added provider's stored row, or a built-in's as the snapshot holds it (fresh after `core.changed()`). */
  const load = async (name: string) => {
    const row = builtIns.has(name) ? snapshot.row(name) : await repo.provider(name);
    if (!row) throw notFound(name);
    return row;
  };
  const view = (row: ProviderRow) => providerView(row, builtIns.providers.get(row.name)?.address);

  admin.route({
    method: 'GET', path: '/providers', summary: 'List providers: the built-in ones (built_in: true) and the added ones', tag, access,
    response: Type.Object({ data: Type.Array(ProviderView) }),
    handler: async () => {
      const added = (await repo.providers()).filter((r) => !builtIns.has(r.name));
      const own = [...builtIns.providers.keys()].flatMap((n) => snapshot.row(n) ?? []);
      return { data: [...own, ...added].sort((a, b) => a.name.localeCompare(b.name)).map(view) };
    },
  });

  admin.route({
    method: 'GET', path: '/providers/:name', summary: 'Get a provider', tag, access,
    response: ProviderView,
    handler: async ({ params }) => view(await load(params.name!)),
  });

  admin.route({
    method: 'POST', path: '/providers', summary: 'Add a provider (saves, then checks it)', tag, access, status: 201,
    body: Type.Object({ name: Type.String({ maxLength: 63 }), address: Address, api_key: Type.Optional(ApiKey) }),
    response: ProviderView,
    handler: async ({ body }) => {
      checkProviderName(body.name, builtIns);
      const address = normalizeAddress(body.address);
      const apiKey = given(body.api_key);
      // Encrypt before saving: without a recovery key nothing is saved (500 credential_key_unavailable).
      const apiKeyEnc = apiKey ? credentials.encrypt(apiKey, keyContext(body.name)) : null;
      const added = await repo.insertProvider({ name: body.name, vendor: addedVendor, address, apiKeyEnc }, new Date());
      if (!added) throw new GatewayError('invalid_request', `name: a provider named "${body.name}" exists already.`, { param: 'name' });
      try {
        await core.checkAndSave({ name: body.name, vendor: addedVendor, address, apiKey }, apiKeyEnc);
      } finally {
        await core.changed();
      }
      return view(await load(body.name));
    },
  });

  admin.route({
    method: 'PATCH', path: '/providers/:name', summary: "Change address, key or both (an empty key keeps the saved one; a built-in's address null clears it); saves and checks", tag, access,
    body: Type.Object({ name: Type.Optional(Type.String()), address: Type.Optional(Type.Union([Address, Type.Null()])), api_key: Type.Optional(ApiKey) }),
    response: ProviderView,
    handler: async ({ params, body }) => {
      const row = await load(params.name!);
      if (body.name !== undefined && body.name !== row.name) {
        throw new GatewayError('invalid_request', 'name: a provider cannot be renamed; add it again under the new name with its models, then remove the old one.', { param: 'name' });
      }
      if (builtIns.has(row.name)) return view(await changeBuiltIn(core, row, body));
      if (body.address === null) throw new GatewayError('invalid_request', 'address: an added provider needs its address; give the API base, e.g. "http://ollama:11434/v1".', { param: 'address' });
      const address = body.address === undefined ? row.address : normalizeAddress(body.address);
      const newKey = given(body.api_key);
      // The saved key is opened before anything is written: a missing recovery key version fails the whole change.
      const apiKey = newKey ?? (row.apiKeyEnc ? credentials.decrypt(row.apiKeyEnc, keyContext(row.name)) : undefined);
      const apiKeyEnc = newKey ? credentials.encrypt(newKey, keyContext(row.name)) : row.apiKeyEnc;
      await repo.updateProvider(row.name, address, apiKeyEnc, new Date());
      try {
        await core.checkAndSave({ name: row.name, vendor: row.vendor, address, apiKey }, apiKeyEnc);
      } finally {
        await core.changed();
      }
      return view(await load(row.name));
    },
  });

  admin.route({
    method: 'GET', path: '/providers/:name/models', summary: "The provider's own model list (its /models), each with the name it would have here and whether it is added", tag, access,
    response: Type.Object({ data: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), added: Type.Boolean() })) }),
    handler: async ({ params }) => {
      const row = await load(params.name!);
      const apiKey = row.apiKeyEnc ? credentials.decrypt(row.apiKeyEnc, keyContext(row.name)) : undefined;
      const ids = await core.providerModels({ name: row.name, vendor: row.vendor, address: row.address, apiKey });
      const added = new Set((await repo.models(row.name)).map((m) => m.name));
      return { data: [...new Set(ids)].sort().map((id) => ({ id, name: `${row.name}:${id}`, added: added.has(`${row.name}:${id}`) })) };
    },
  });

  admin.route({
    method: 'POST', path: '/providers/:name/check', summary: 'Check a provider now (free list-models call)', tag, access,
    response: ProviderView,
    handler: async ({ params }) => {
      const row = await load(params.name!);
      if (builtIns.has(row.name) && !row.apiKeyEnc) {
        throw new GatewayError('invalid_request', `api_key: built-in provider ${row.name} has no instance-wide key to check; set one with PATCH first.`, { param: 'api_key' });
      }
      const apiKey = row.apiKeyEnc ? credentials.decrypt(row.apiKeyEnc, keyContext(row.name)) : undefined;
      await core.checkAndSave({ name: row.name, vendor: row.vendor, address: row.address, apiKey }, row.apiKeyEnc);
      await core.changed();
      return view(await load(row.name));
    },
  });

  admin.route({
    method: 'DELETE', path: '/providers/:name', summary: 'Remove a provider (its models stay, refused until a provider of that name is added again)', tag, access,
    query: Type.Object({ confirm: Type.Optional(Type.String({ description: 'Must equal the provider name' })) }),
    response: Type.Object({ name: Type.String(), removed: Type.Boolean(), models_kept: Type.Array(Type.String()) }),
    handler: async ({ params, query }) => {
      const row = await load(params.name!);
      if (builtIns.has(row.name)) {
        throw new GatewayError('invalid_request', `name: "${row.name}" is a built-in provider and cannot be removed; DELETE /admin/v1/providers/${row.name}/key removes its key.`, { param: 'name' });
      }
      if (query.confirm !== row.name) {
        throw new GatewayError('invalid_request', `confirm: removing a provider refuses requests to its models; send ?confirm=${row.name} to go ahead.`, { param: 'confirm' });
      }
      await repo.deleteProvider(row.name);
      await core.changed();
      const kept = (await repo.models(row.name)).map((m) => m.name);
      return { name: row.name, removed: true, models_kept: kept };
    },
  });
}
