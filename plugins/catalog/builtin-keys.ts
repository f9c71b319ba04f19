import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import { instanceScope } from './builtin-repo.js';
import type { CatalogCore } from './core.js';
import { keyContext } from './snapshot.js';
import { CheckStatus } from './views.js';

const tag = 'catalog';
const ApiKey = Type.String({ minLength: 1, maxLength: 8192, description: 'Stored encrypted and never shown again' });

function notBuiltIn(name: string): GatewayError {
  return new GatewayError('not_found', `No built-in provider named "${name}".`);
}

/**
 * Saves a built-in provider's key (instance-wide, or one workspace's own), then checks it with the
 * free check and stores the result. The key is encrypted before anything is written.
 */
export async function saveKey(core: CatalogCore, provider: string, workspaceId: string, apiKey: string): Promise<void> {
  const row = core.snapshot.row(provider)!;
  const apiKeyEnc = core.credentials.encrypt(apiKey, keyContext(provider, workspaceId));
  await core.builtInRepo.saveKey(provider, workspaceId, apiKeyEnc, new Date());
  core.log.info('catalog.builtin_key_changed', { provider, workspace_id: workspaceId === instanceScope ? null : workspaceId, action: 'set' });
  try {
    await core.checkAndSave({ name: provider, vendor: row.vendor, address: row.address, apiKey }, apiKeyEnc, workspaceId);
  } finally {
    await core.changed();
  }
}

const WorkspaceKeyView = Type.Object({
  provider: Type.String(),
  vendor: Type.String(),
  has_workspace_key: Type.Boolean({ description: "This workspace's own key is set (used instead of the instance-wide key)" }),
  has_instance_key: Type.Boolean({ description: 'The instance-wide key is set' }),
  check: CheckStatus,
  checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/**
 * Key routes of built-in providers: the instance admin's removal of the instance-wide key, and
 * workspace admins' own keys (SPEC.md: workspace-level keys exist only for built-in providers).
 */
export function builtInKeyRoutes(admin: AdminApi, core: CatalogCore): void {
  const { snapshot, builtInRepo } = core;
  const builtIn = (name: string) => {
    if (!snapshot.builtIns.has(name)) throw notBuiltIn(name);
    return snapshot.row(name)!;
  };
  const workspaceView = async (workspaceId: string, name: string) => {
    const row = builtIn(name);
    const own = await builtInRepo.key(name, workspaceId);
    return {
      provider: name,
      vendor: row.vendor,
      has_workspace_key: own !== undefined,
      has_instance_key: row.apiKeyEnc !== null,
      check: own?.check ?? 'unchecked',
      checked_at: own?.checkedAt?.toISOString() ?? null,
    };
  };

  admin.route({
    method: 'DELETE', path: '/providers/:name/key', summary: "Remove a built-in provider's instance-wide key (workspaces' own keys stay)", tag, access: 'instance-admin',
    response: Type.Object({ provider: Type.String(), removed: Type.Boolean() }),
    handler: async ({ params }) => {
      const row = builtIn(params.name!);
      const removed = await builtInRepo.deleteKey(row.name, instanceScope);
      if (removed) core.log.info('catalog.builtin_key_changed', { provider: row.name, workspace_id: null, action: 'removed' });
      await core.changed();
      return { provider: row.name, removed };
    },
  });

  const ws = { workspace: 'admin', param: 'workspaceId' } as const;
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/provider-keys', summary: "Built-in providers and this workspace's own keys", tag, access: ws,
    response: Type.Object({ data: Type.Array(WorkspaceKeyView) }),
    handler: async ({ params }) => ({ data: await Promise.all([...snapshot.builtIns.providers.keys()].sort().map((n) => workspaceView(params.workspaceId!, n))) }),
  });

  admin.route({
    method: 'PUT', path: '/workspaces/:workspaceId/provider-keys/:name', summary: "Set this workspace's own key for a built-in provider (saves, then checks)", tag, access: ws,
    body: Type.Object({ api_key: ApiKey }),
    response: WorkspaceKeyView,
    handler: async ({ params, body }) => {
      builtIn(params.name!);
      const apiKey = body.api_key.trim();
      if (!apiKey) throw new GatewayError('invalid_request', 'api_key: must not be empty.', { param: 'api_key' });
      await saveKey(core, params.name!, params.workspaceId!, apiKey);
      return workspaceView(params.workspaceId!, params.name!);
    },
  });

  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/provider-keys/:name', summary: "Remove this workspace's own key (the instance-wide key applies again)", tag, access: ws,
    response: Type.Object({ provider: Type.String(), removed: Type.Boolean() }),
    handler: async ({ params }) => {
      builtIn(params.name!);
      const removed = await builtInRepo.deleteKey(params.name!, params.workspaceId!);
      if (removed) core.log.info('catalog.builtin_key_changed', { provider: params.name!, workspace_id: params.workspaceId!, action: 'removed' });
      await core.changed();
      return { provider: params.name!, removed };
    },
  });
}
