import type { Store } from '../../kernel/index.js';
import { indexCaps, type Cap, type CapIndex, type Scope } from './caps.js';
import type { Period } from './periods.js';

export const changeChannel = 'budgets.changed';

/** Encryption context of the stored alert webhook secret (see CredentialVault). */
export const webhookSecretContext = 'budgets.alert-webhook';

/** What the request path reads: caps and settings, in memory. */
export interface Snapshot {
  caps: Cap[];
  index: CapIndex;
  /** Workspace id → budget fallback model name. */
  fallbackModel: Map<string, string>;
  /** The alert webhook set through the admin API (instance-wide), if any; `secret` is the stored ciphertext. */
  webhook: { url: string; secret: string | null } | null;
}

interface CapRow { id: string; scope: string; workspace_id: string; subject_id: string; amount_micro_usd: string | number; period: string; thresholds: string }
interface SettingRow { workspace_id: string; fallback_model: string | null; webhook_url: string | null; webhook_secret: string | null }

export function capFromRow(r: CapRow): Cap {
  return {
    id: r.id,
    scope: r.scope as Scope,
    workspaceId: r.workspace_id,
    subjectId: r.subject_id,
    amountMicroUsd: Number(r.amount_micro_usd),
    period: r.period as Period,
    thresholds: JSON.parse(r.thresholds) as number[],
  };
}

export async function loadSnapshot(store: Store): Promise<Snapshot> {
  const caps = (await store.execute<CapRow>('select * from budget_caps order by created_at, id')).map(capFromRow);
  const settings = await store.execute<SettingRow>('select * from budget_settings');
  const fallbackModel = new Map<string, string>();
  let webhook: Snapshot['webhook'] = null;
  for (const s of settings) {
    if (s.workspace_id === '*') webhook = s.webhook_url ? { url: s.webhook_url, secret: s.webhook_secret } : null;
    else if (s.fallback_model) fallbackModel.set(s.workspace_id, s.fallback_model);
  }
  return { caps, index: indexCaps(caps), fallbackModel, webhook };
}

export function emptySnapshot(): Snapshot {
  return { caps: [], index: new Map(), fallbackModel: new Map(), webhook: null };
}
