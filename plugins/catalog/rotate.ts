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
export async function rotateCredentials(repo: CatalogRepo, credentials: Credentials): Promise<RotationCounts> {
  const version = credentials.inUse;
  if (version === null) throw new Error('no recovery key is set: give SVC_RECOVERY_KEYS (and optionally SVC_RECOVERY_KEY_VERSION) to rotate credentials');
  const counts: RotationCounts = { rotated: 0, current: 0, unreadable: 0, version };
  for (const row of await repo.providers()) {
    if (!row.apiKeyEnc) continue;
    if (Credentials.versionOf(row.apiKeyEnc) === version) {
      counts.current++;
      continue;
    }
    let plain: string;
    try {
      plain = credentials.decrypt(row.apiKeyEnc, keyContext(row.name));
    } catch {
      counts.unreadable++;
      continue;
    }
    if (await repo.replaceKey(row.name, row.apiKeyEnc, credentials.encrypt(plain, keyContext(row.name)))) counts.rotated++;
  }
  return counts;
}
