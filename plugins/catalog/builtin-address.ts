import { instanceScope } from './builtin-repo.js';
import { saveKey } from './builtin-keys.js';
import type { CatalogCore } from './core.js';
import { normalizeAddress } from './names.js';
import type { ProviderRow } from './repo.js';
import { keyContext } from './snapshot.js';

/** What PATCH /providers/:name may change on a built-in provider. */
export interface BuiltInChange {
  /** A new address; `null` or `""` clears the admin's address (the built-in's default applies again). */
  address?: string | null;
  /** A new instance-wide key; empty keeps the saved one. */
  api_key?: string;
}

/**
 * PATCH /providers/:name on a built-in provider (issue 27): an instance admin may set its address
 * (a regional endpoint, a corporate egress proxy) — normalised and validated like an added
 * provider's — or clear it, and set its instance-wide key. Saves first, then checks the instance
 * key at the address now in force, as for any provider (SPEC.md "Provider"); without an instance
 * key there is nothing to check with, and the row stays as it was until a key is set.
 */
export async function changeBuiltIn(core: CatalogCore, row: ProviderRow, body: BuiltInChange): Promise<ProviderRow> {
  const apiKey = body.api_key?.trim();
  if (body.address !== undefined) {
    const address = body.address === null || body.address.trim() === '' ? null : normalizeAddress(body.address);
    if (address === null) {
      if (await core.builtInRepo.deleteAddress(row.name)) core.log.info('catalog.builtin_address_changed', { provider: row.name, action: 'cleared' });
    } else {
      await core.builtInRepo.saveAddress(row.name, address, new Date());
      core.log.info('catalog.builtin_address_changed', { provider: row.name, action: 'set' });
    }
    await core.changed();
    // A new key is checked as it is saved, below; otherwise the saved key is checked at the new address.
    if (!apiKey) await checkInstanceKey(core, row.name);
  }
  if (apiKey) await saveKey(core, row.name, instanceScope, apiKey);
  return core.snapshot.row(row.name)!;
}

async function checkInstanceKey(core: CatalogCore, name: string): Promise<void> {
  const now = core.snapshot.row(name)!;
  if (!now.apiKeyEnc) return;
  try {
    const apiKey = core.credentials.decrypt(now.apiKeyEnc, keyContext(name));
    await core.checkAndSave({ name, vendor: now.vendor, address: now.address, apiKey }, now.apiKeyEnc);
  } finally {
    await core.changed();
  }
}
