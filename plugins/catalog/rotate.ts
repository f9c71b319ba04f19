import type { BuiltInRepo } from './builtin-repo.js';
import { Credentials } from './credentials.js';
import type { CatalogRepo } from './repo.js';
import { keyContext } from './snapshot.js';

export interface RotationCounts {
  /** Re-encrypted to the version in use. */
  rotated: number;
  /** Already written with the version in use. */
  current: number;
  /** Needing a version this process was not given (left as they are). */
  unreadable: number;
  version: string;
}

/**
 * Re-encrypts every stored provider key to the recovery key version in use, so an older version
 * can then be dropped from SVC_RECOVERY_KEYS. Each row is replaced only if it still holds the
 * value read, so a key changed meanwhile by an admin is left alone.
 */
export async function rotateCredentials(repo: CatalogRepo, credentials: Credentials, builtIn?: BuiltInRepo): Promise<RotationCounts> {
  const version = credentials.inUse;
  if (version === null) throw new Error('no recovery key is set: give SVC_RECOVERY_KEYS (and optionally SVC_RECOVERY_KEY_VERSION) to rotate credentials');
  const counts: RotationCounts = { rotated: 0, current: 0, unreadable: 0, version };
  const one = async (stored: string, context: string, replace: (to: string) => Promise<boolean>): Promise<void> => {
    if (Credentials.versionOf(stored) === version) {
      counts.current++;
      return;
    }
    let plain: string;
    try {
      plain = credentials.decrypt(stored, context);
    } catch {
      counts.unreadable++;
      return;
    }
    if (await replace(credentials.encrypt(plain, context))) counts.rotated++;
  };
  for (const row of await repo.providers()) {
    if (row.apiKeyEnc) await one(row.apiKeyEnc, keyContext(row.name), (to) => repo.replaceKey(row.name, row.apiKeyEnc!, to));
  }
  // Built-in providers' keys, instance-wide and per workspace.
  for (const k of (await builtIn?.keys()) ?? []) {
    await one(k.apiKeyEnc, keyContext(k.provider, k.workspaceId), (to) => builtIn!.replaceKey(k.provider, k.workspaceId, k.apiKeyEnc, to));
  }
  return counts;
}
