import type { ProviderCheckStatus, Store } from '../../kernel/index.js';

/** The workspace id under which a built-in provider's instance-wide key is stored. */
export const instanceScope = '';

/** A stored key of a built-in provider: instance-wide (`workspaceId` '') or one workspace's own. */
export interface KeyRow {
  provider: string;
  workspaceId: string;
  apiKeyEnc: string;
  check: ProviderCheckStatus;
  checkedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An admin's change to a built-in model of the catalogue: hidden, or re-priced (null keeps the catalogue's price). */
export interface OverrideRow {
  name: string;
  hidden: boolean;
  inputMicroUsdPerMTok: number | null;
  outputMicroUsdPerMTok: number | null;
  /** A lower output limit than the catalogue's (null keeps the catalogue's). */
  outputLimit: number | null;
  updatedAt: Date;
}

type Raw = Record<string, unknown>;
const date = (v: unknown): Date => new Date(String(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toKey(r: Raw): KeyRow {
  return {
    provider: String(r.provider),
    workspaceId: String(r.workspace_id),
    apiKeyEnc: String(r.api_key_enc),
    check: String(r.check_status) as ProviderCheckStatus,
    checkedAt: r.checked_at ? date(r.checked_at) : null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

function toOverride(r: Raw): OverrideRow {
  return {
    name: String(r.name),
    hidden: Number(r.hidden) === 1,
    inputMicroUsdPerMTok: numOrNull(r.input_micro_usd_per_mtok),
    outputMicroUsdPerMTok: numOrNull(r.output_micro_usd_per_mtok),
    outputLimit: numOrNull(r.output_limit),
    updatedAt: date(r.updated_at),
  };
}

/** An instance admin's address for a built-in provider (table of migration catalog-006). */
export interface AddressRow {
  provider: string;
  address: string;
  updatedAt: Date;
}

/** SQL for built-in providers' keys and model overrides (migration catalog-002) and admin-set addresses (catalog-006). */
export class BuiltInRepo {
  constructor(private readonly store: Store) {}

  async keys(): Promise<KeyRow[]> {
    return (await this.store.execute('select * from catalog_builtin_keys order by provider, workspace_id')).map(toKey);
  }

  async key(provider: string, workspaceId: string): Promise<KeyRow | undefined> {
    const [row] = await this.store.execute('select * from catalog_builtin_keys where provider = ? and workspace_id = ?', [provider, workspaceId]);
    return row ? toKey(row) : undefined;
  }

  /** Saves a key (a new one replaces the old and is unchecked until its check ran). */
  async saveKey(provider: string, workspaceId: string, apiKeyEnc: string, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.store.execute(
      `insert into catalog_builtin_keys (provider, workspace_id, api_key_enc, check_status, checked_at, created_at, updated_at)
       values (?, ?, ?, 'unchecked', null, ?, ?)
       on conflict (provider, workspace_id) do update set api_key_enc = excluded.api_key_enc, check_status = 'unchecked', checked_at = null, updated_at = excluded.updated_at`,
      [provider, workspaceId, apiKeyEnc, at, at],
    );
  }

  async saveCheck(provider: string, workspaceId: string, status: ProviderCheckStatus, at: Date): Promise<void> {
    await this.store.execute('update catalog_builtin_keys set check_status = ?, checked_at = ? where provider = ? and workspace_id = ?', [status, at.toISOString(), provider, workspaceId]);
  }

  /** False when there was no such key. */
  async deleteKey(provider: string, workspaceId: string): Promise<boolean> {
    if (!(await this.key(provider, workspaceId))) return false;
    await this.store.execute('delete from catalog_builtin_keys where provider = ? and workspace_id = ?', [provider, workspaceId]);
    return true;
  }

  /** Replaces one stored key only if it still holds the value read (credential rotation). */
  async replaceKey(provider: string, workspaceId: string, from: string, to: string): Promise<boolean> {
    const before = await this.store.execute('select provider from catalog_builtin_keys where provider = ? and workspace_id = ? and api_key_enc = ?', [provider, workspaceId, from]);
    if (!before.length) return false;
    await this.store.execute('update catalog_builtin_keys set api_key_enc = ? where provider = ? and workspace_id = ? and api_key_enc = ?', [to, provider, workspaceId, from]);
    return true;
  }

  async addresses(): Promise<AddressRow[]> {
    const rows = await this.store.execute('select * from catalog_builtin_addresses order by provider');
    return rows.map((r) => ({ provider: String(r.provider), address: String(r.address), updatedAt: date(r.updated_at) }));
  }

  async saveAddress(provider: string, address: string, now: Date): Promise<void> {
    await this.store.execute(
      `insert into catalog_builtin_addresses (provider, address, updated_at) values (?, ?, ?)
       on conflict (provider) do update set address = excluded.address, updated_at = excluded.updated_at`,
      [provider, address, now.toISOString()],
    );
  }

  /** False when no address was set. */
  async deleteAddress(provider: string): Promise<boolean> {
    const [row] = await this.store.execute('select provider from catalog_builtin_addresses where provider = ?', [provider]);
    if (!row) return false;
    await this.store.execute('delete from catalog_builtin_addresses where provider = ?', [provider]);
    return true;
  }

  async overrides(): Promise<OverrideRow[]> {
    return (await this.store.execute('select * from catalog_model_overrides order by name')).map(toOverride);
  }

  async saveOverride(o: Omit<OverrideRow, 'updatedAt'>, now: Date): Promise<void> {
    await this.store.execute(
      `insert into catalog_model_overrides (name, hidden, input_micro_usd_per_mtok, output_micro_usd_per_mtok, output_limit, updated_at) values (?, ?, ?, ?, ?, ?)
       on conflict (name) do update set hidden = excluded.hidden, input_micro_usd_per_mtok = excluded.input_micro_usd_per_mtok,
         output_micro_usd_per_mtok = excluded.output_micro_usd_per_mtok, output_limit = excluded.output_limit, updated_at = excluded.updated_at`,
      [o.name, o.hidden ? 1 : 0, o.inputMicroUsdPerMTok, o.outputMicroUsdPerMTok, o.outputLimit, now.toISOString()],
    );
  }

  async deleteOverride(name: string): Promise<void> {
    await this.store.execute('delete from catalog_model_overrides where name = ?', [name]);
  }
}
