import type { AppliedCatalogue, CatalogModel, CatalogProvider, CatalogService } from '../../kernel/index.js';
import { instanceScope, type KeyRow, type OverrideRow } from './builtin-repo.js';
import type { BuiltIns } from './builtins.js';
import type { Credentials } from './credentials.js';
import type { FeedRepo } from './feed.js';
import type { CatalogRepo, ProviderRow } from './repo.js';
import type { BuiltInRepo } from './builtin-repo.js';

/** What a reload changed: providers whose adapter settings differ (added, removed, address, keys), and whether any model did. */
export interface SnapshotDiff {
  providers: string[];
  models: boolean;
}

/** Associated data a provider's key is encrypted with: the ciphertext only opens on its own row. */
export const keyContext = (provider: string, workspaceId = instanceScope): string =>
  workspaceId === instanceScope ? `catalog.provider:${provider}` : `catalog.provider:${provider}:workspace:${workspaceId}`;

const wsKey = (provider: string, workspaceId: string): string => `${provider}\n${workspaceId}`;
const epoch = new Date(0);

/** A built-in provider as a row: no stored row of its own, its instance-wide key (if any) from the keys table. */
function builtInRow(name: string, vendor: string, address: string, key: KeyRow | undefined): ProviderRow {
  return { name, vendor, address, apiKeyEnc: key?.apiKeyEnc ?? null, check: key?.check ?? 'unchecked', checkedAt: key?.checkedAt ?? null, createdAt: epoch, updatedAt: key?.updatedAt ?? epoch };
}

/** A catalogue model after an admin's change; undefined when hidden. */
function overridden(m: CatalogModel, o: OverrideRow | undefined): CatalogModel | undefined {
  if (!o) return m;
  if (o.hidden) return undefined;
  return Object.freeze({
    ...m,
    inputMicroUsdPerMTok: o.inputMicroUsdPerMTok ?? m.inputMicroUsdPerMTok,
    outputMicroUsdPerMTok: o.outputMicroUsdPerMTok ?? m.outputMicroUsdPerMTok,
    // Never above the catalogue's: a feed that lowers the model's maximum wins over an older setting.
    outputLimit: Math.min(o.outputLimit ?? m.outputLimit, m.outputLimit),
  });
}

/**
 * The CatalogService the request path reads: providers (added and built-in) and models (added and
 * the built-in catalogue's, with admins' overrides) held in memory, swapped whole on reload (no
 * database round trip per request). Keys are decrypted on first use and the plain values kept in
 * this process's memory only.
 */
export class CatalogSnapshot implements CatalogService {
  private rows = new Map<string, ProviderRow>();
  private workspaceKeys = new Map<string, string>();
  private settings = new Map<string, string>();
  private providerViews = new Map<string, CatalogProvider>();
  private modelMap = new Map<string, CatalogModel>();
  private modelList: CatalogModel[] = [];
  private modelStamps = '';
  private readonly plainKeys = new Map<string, { enc: string; plain: string }>();
  private readonly listeners: Array<(provider?: string) => void> = [];
  private chain: Promise<unknown> = Promise.resolve();
  private feed: AppliedCatalogue | undefined;

  constructor(
    private readonly repo: CatalogRepo,
    private readonly builtInRepo: BuiltInRepo,
    readonly builtIns: BuiltIns,
    private readonly credentials: Credentials,
    private readonly feedRepo?: FeedRepo,
  ) {}

  /** The signed feed list in force over the committed catalogue (catalogue-feed plugin), if any. */
  appliedFeed(): AppliedCatalogue | undefined {
    return this.feed;
  }

  model(name: string): CatalogModel | undefined {
    return this.modelMap.get(name);
  }

  models(): CatalogModel[] {
    return this.modelList;
  }

  provider(name: string): CatalogProvider | undefined {
    return this.providerViews.get(name);
  }

  providers(): CatalogProvider[] {
    return [...this.providerViews.values()];
  }

  /** The stored row (encrypted key included; a built-in's made from its instance key), for the plugin's own admin and health code. */
  row(name: string): ProviderRow | undefined {
    return this.rows.get(name);
  }

  providerKey(name: string, workspaceId?: string): string | undefined {
    if (workspaceId !== undefined) {
      const own = this.workspaceKeys.get(wsKey(name, workspaceId));
      if (own) return this.open(name, workspaceId, own);
    }
    const enc = this.rows.get(name)?.apiKeyEnc;
    return enc ? this.open(name, instanceScope, enc) : undefined;
  }

  configured(name: string, workspaceId?: string): boolean {
    const row = this.rows.get(name);
    if (!row) return false;
    if (!this.builtIns.has(name) || row.apiKeyEnc !== null) return true;
    return workspaceId !== undefined && this.workspaceKeys.has(wsKey(name, workspaceId));
  }

  hasWorkspaceKey(name: string, workspaceId: string): boolean {
    return this.workspaceKeys.has(wsKey(name, workspaceId));
  }

  private open(name: string, workspaceId: string, enc: string): string {
    const id = wsKey(name, workspaceId);
    const cached = this.plainKeys.get(id);
    if (cached?.enc === enc) return cached.plain;
    const plain = this.credentials.decrypt(enc, keyContext(name, workspaceId));
    this.plainKeys.set(id, { enc, plain });
    return plain;
  }

  onChange(listener: (provider?: string) => void): void {
    this.listeners.push(listener);
  }

  /** Tells listeners what changed: each changed provider by name, then `undefined` when models changed. */
  notify(diff: SnapshotDiff): void {
    const calls: Array<string | undefined> = [...diff.providers];
    if (diff.models) calls.push(undefined);
    for (const provider of calls) {
      for (const listener of this.listeners) {
        try {
          listener(provider);
        } catch {
          // One listener failing must not keep the others from seeing the change.
        }
      }
    }
  }

  /** Reads the tables and swaps the snapshot; reloads run one after another, each seeing every earlier write. */
  reload(): Promise<SnapshotDiff> {
    const next = this.chain.then(() => this.load());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async load(): Promise<SnapshotDiff> {
    const [providers, added, keys, overrides, feed, addresses] = await Promise.all([
      this.repo.providers(), this.repo.models(), this.builtInRepo.keys(), this.builtInRepo.overrides(), this.feedRepo?.current(), this.builtInRepo.addresses(),
    ]);
    // An instance admin's address for a built-in wins over its default (or the config's).
    const setAddress = new Map(addresses.map((a) => [a.provider, a]));
    const builtIns = this.builtIns;
    // A stored row named like a built-in (saved before that vendor shipped) is shadowed by the built-in.
    const rows = new Map(providers.filter((r) => !builtIns.has(r.name)).map((r) => [r.name, r]));
    const ownKeys = keys.filter((k) => builtIns.has(k.provider));
    for (const b of builtIns.providers.values()) {
      const row = builtInRow(b.name, b.vendor, setAddress.get(b.name)?.address ?? b.address, ownKeys.find((k) => k.provider === b.name && k.workspaceId === instanceScope));
      const addressAt = setAddress.get(b.name)?.updatedAt;
      rows.set(b.name, addressAt && addressAt > row.updatedAt ? { ...row, updatedAt: addressAt } : row);
    }
    const workspaceKeys = new Map(ownKeys.filter((k) => k.workspaceId !== instanceScope).map((k) => [wsKey(k.provider, k.workspaceId), k.apiKeyEnc]));
    const settings = new Map([...rows.values()].map((r) => [r.name, `${r.vendor}\n${r.address}\n${r.apiKeyEnc ?? ''}`]));
    for (const k of ownKeys) if (k.workspaceId !== instanceScope) settings.set(k.provider, `${settings.get(k.provider)}\n${k.workspaceId}=${k.apiKeyEnc}`);
    const names = new Set([...settings.keys(), ...this.settings.keys()]);
    const changed = [...names].filter((n) => settings.get(n) !== this.settings.get(n)).sort();
    const stamps = JSON.stringify([added, overrides, feed?.digest ?? null]);
    const diff: SnapshotDiff = { providers: changed, models: stamps !== this.modelStamps };
    this.rows = rows;
    this.workspaceKeys = workspaceKeys;
    this.settings = settings;
    this.providerViews = new Map(
      [...rows.values()].map((r) => [r.name, Object.freeze({ name: r.name, vendor: r.vendor, address: r.address, builtIn: builtIns.has(r.name), hasKey: r.apiKeyEnc !== null, check: r.check, checkedAt: r.checkedAt })]),
    );
    if (diff.models) {
      if (feed?.digest !== this.feed?.digest) builtIns.useFeed(feed);
      this.feed = feed && { sequence: feed.sequence, issuedAt: feed.issuedAt, digest: feed.digest, appliedAt: feed.appliedAt };
      const byName = new Map(overrides.map((o) => [o.name, o]));
      const own = builtIns.models().flatMap((m) => overridden(m, byName.get(m.name)) ?? []);
      const frozen = [...added.filter((m) => !builtIns.model(m.name)).map(({ updatedAt: _updated, ...m }) => Object.freeze(m)), ...own];
      this.modelMap = new Map(frozen.map((m) => [m.name, m]));
      this.modelList = Object.freeze(frozen) as CatalogModel[];
      this.modelStamps = stamps;
    }
    for (const [id, entry] of this.plainKeys) {
      const [name, ws] = id.split('\n') as [string, string];
      const enc = ws === instanceScope ? rows.get(name)?.apiKeyEnc : workspaceKeys.get(id);
      if (enc !== entry.enc) this.plainKeys.delete(id);
    }
    return diff;
  }
}
