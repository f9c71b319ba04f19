import type { AdminApi, CatalogService, CredentialVault, IdentityService, Logger, SnapshotSync, Store } from '../../../kernel/index.js';
import type { Snapshot } from '../snapshot.js';
import type { Totals } from '../totals.js';

/** What the admin routes of budgets need. */
export interface RouteDeps {
  admin: AdminApi;
  identity: IdentityService;
  catalog: CatalogService;
  store: Store;
  sync: SnapshotSync<Snapshot>;
  vault: CredentialVault;
  totals: Totals;
  log: Logger;
  /** Alert thresholds of a cap created without its own. */
  defaults: number[];
}
