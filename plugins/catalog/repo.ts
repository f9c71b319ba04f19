import type { CatalogModel, ProviderCheckStatus, Store } from '../../kernel/index.js';
import { column as deadlineColumn } from './deadlines.js';

/** A provider row as stored: the key only in its encrypted form. */
export interface ProviderRow {
  name: string;
  vendor: string;
  address: string;
  apiKeyEnc: string | null;
  check: ProviderCheckStatus;
  checkedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type ModelRow = CatalogModel & { updatedAt: Date };

type Raw = Record<string, unknown>;

// PostgreSQL returns bigint as a string and SQLite integers as numbers; Number() evens them out.
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const date = (v: unknown): Date => new Date(String(v));

function toProvider(r: Raw): ProviderRow {
  return {
    name: String(r.name),
    vendor: String(r.vendor),
    address: String(r.address),
    apiKeyEnc: r.api_key_enc === null || r.api_key_enc === undefined ? null : String(r.api_key_enc),
    check: String(r.check_status) as ProviderCheckStatus,
    checkedAt: r.checked_at ? date(r.checked_at) : null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

function toModel(r: Raw): ModelRow {
  return {
    name: String(r.name),
    provider: String(r.provider),
    upstreamId: String(r.upstream_id),
    displayName: String(r.display_name),
    contextWindow: num(r.context_window),
    outputLimit: num(r.output_limit),
    inputMicroUsdPerMTok: numOrNull(r.input_micro_usd_per_mtok),
    outputMicroUsdPerMTok: numOrNull(r.output_micro_usd_per_mtok),
    canReadImages: num(r.can_read_images) === 1,
    canReadPdf: num(r.can_read_pdf) === 1,
    canCallTools: num(r.can_call_tools) === 1,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    ...withDeadlines(deadlineColumn.read(r.deadlines)),
  };
}

const withDeadlines = (d: ModelRow['deadlines']): Pick<ModelRow, 'deadlines'> => (d ? { deadlines: d } : {});

const bit = (b: boolean): number => (b ? 1 : 0);

/**
 * The catalog's SQL. Every statement uses `?` placeholders (the store maps them per dialect);
 * the request path never calls these: it reads the in-memory snapshot.
 */
export class CatalogRepo {
  constructor(private readonly store: Store) {}

  async providers(): Promise<ProviderRow[]> {
    return (await this.store.execute('select * from catalog_providers order by name')).map(toProvider);
  }

  async provider(name: string): Promise<ProviderRow | undefined> {
    const [row] = await this.store.execute('select * from catalog_providers where name = ?', [name]);
    return row ? toProvider(row) : undefined;
  }

  /** False when a provider of that name exists already (a concurrent add included). */
  async insertProvider(p: Omit<ProviderRow, 'check' | 'checkedAt' | 'createdAt' | 'updatedAt'>, now: Date): Promise<boolean> {
    const at = now.toISOString();
    return this.insertOnce('catalog_providers', p.name, () =>
      this.store.execute(
        'insert into catalog_providers (name, vendor, address, api_key_enc, check_status, checked_at, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
        [p.name, p.vendor, p.address, p.apiKeyEnc, 'unchecked', null, at, at],
      ),
    );
  }

  async updateProvider(name: string, address: string, apiKeyEnc: string | null, now: Date): Promise<void> {
    await this.store.execute('update catalog_providers set address = ?, api_key_enc = ?, updated_at = ? where name = ?', [address, apiKeyEnc, now.toISOString(), name]);
  }

  async saveCheck(name: string, status: ProviderCheckStatus, at: Date): Promise<void> {
    await this.store.execute('update catalog_providers set check_status = ?, checked_at = ? where name = ?', [status, at.toISOString(), name]);
  }

  async deleteProvider(name: string): Promise<void> {
    await this.store.execute('delete from catalog_providers where name = ?', [name]);
  }

  /** Replaces one stored credential only if it is still the value that was read (rotation). */
  async replaceKey(name: string, from: string, to: string): Promise<boolean> {
    const before = await this.store.execute('select name from catalog_providers where name = ? and api_key_enc = ?', [name, from]);
    if (!before.length) return false;
    await this.store.execute('update catalog_providers set api_key_enc = ? where name = ? and api_key_enc = ?', [to, name, from]);
    return true;
  }

  async models(provider?: string): Promise<ModelRow[]> {
    const rows = provider
      ? await this.store.execute('select * from catalog_models where provider = ? order by name', [provider])
      : await this.store.execute('select * from catalog_models order by name');
    return rows.map(toModel);
  }

  async model(name: string): Promise<ModelRow | undefined> {
    const [row] = await this.store.execute('select * from catalog_models where name = ?', [name]);
    return row ? toModel(row) : undefined;
  }

  /** False when a model of that name exists already. */
  async insertModel(m: Omit<ModelRow, 'createdAt' | 'updatedAt'>, now: Date): Promise<boolean> {
    const at = now.toISOString();
    return this.insertOnce('catalog_models', m.name, () =>
      this.store.execute(
        `insert into catalog_models (name, provider, upstream_id, display_name, context_window, output_limit, input_micro_usd_per_mtok,
           output_micro_usd_per_mtok, can_read_images, can_read_pdf, can_call_tools, created_at, updated_at, deadlines)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [m.name, m.provider, m.upstreamId, m.displayName, m.contextWindow, m.outputLimit, m.inputMicroUsdPerMTok, m.outputMicroUsdPerMTok,
          bit(m.canReadImages), bit(m.canReadPdf), bit(m.canCallTools), at, at, deadlineColumn.write(m.deadlines)],
      ),
    );
  }

  async updateModel(m: Omit<ModelRow, 'createdAt' | 'updatedAt'>, now: Date): Promise<void> {
    await this.store.execute(
      `update catalog_models set display_name = ?, context_window = ?, output_limit = ?, input_micro_usd_per_mtok = ?,
         output_micro_usd_per_mtok = ?, can_read_images = ?, can_read_pdf = ?, can_call_tools = ?, updated_at = ?, deadlines = ? where name = ?`,
      [m.displayName, m.contextWindow, m.outputLimit, m.inputMicroUsdPerMTok, m.outputMicroUsdPerMTok,
        bit(m.canReadImages), bit(m.canReadPdf), bit(m.canCallTools), now.toISOString(), deadlineColumn.write(m.deadlines), m.name],
    );
  }

  async deleteModel(name: string): Promise<void> {
    await this.store.execute('delete from catalog_models where name = ?', [name]);
  }

  /** Runs an insert; a primary-key clash (the name exists, maybe added by another replica just now) gives false. */
  private async insertOnce(table: string, name: string, insert: () => Promise<unknown>): Promise<boolean> {
    if ((await this.store.execute(`select name from ${table} where name = ?`, [name])).length) return false;
    try {
      await insert();
      return true;
    } catch (err) {
      if ((await this.store.execute(`select name from ${table} where name = ?`, [name])).length) return false;
      throw err;
    }
  }
}
