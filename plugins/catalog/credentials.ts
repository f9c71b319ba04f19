import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GatewayError } from '../../kernel/index.js';

/** Where the embedded shape keeps its generated recovery key when SVC_RECOVERY_KEYS is unset. */
export const recoveryKeyFile = 'recovery-keys';

const labelPattern = /^[A-Za-z0-9_-]{1,32}$/;

/** The recovery keys this process was given, by version, and the version new writes use. */
export interface KeyRing {
  versions: Map<string, Buffer>;
  /** Null when no key was given at all (scale-out without SVC_RECOVERY_KEYS). */
  inUse: string | null;
  source: 'env' | 'file' | 'none';
}

/**
 * Parses `v2:<base64 of 32 bytes>,v1:<…>` (commas or new lines). Errors name the entry, never
 * its key material.
 */
export function parseKeyList(text: string, where: string): Map<string, Buffer> {
  const versions = new Map<string, Buffer>();
  const entries = text.split(/[,\n]/).map((e) => e.trim()).filter(Boolean);
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const label = colon > 0 ? entry.slice(0, colon) : '';
    if (!labelPattern.test(label)) throw new Error(`${where}: entry ${i + 1} must look like v1:<base64 of 32 bytes>`);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32) throw new Error(`${where}: version ${label} is not 32 bytes of base64`);
    if (versions.has(label)) throw new Error(`${where}: version ${label} is listed twice`);
    versions.set(label, key);
  });
  if (versions.size === 0) throw new Error(`${where}: no recovery key listed`);
  return versions;
}

function pickInUse(versions: Map<string, Buffer>, wanted: string | undefined): string {
  const inUse = wanted?.trim() || [...versions.keys()][0]!;
  if (!versions.has(inUse)) throw new Error(`SVC_RECOVERY_KEY_VERSION: version ${inUse} is not among the recovery keys given`);
  return inUse;
}

/**
 * The key ring from SVC_RECOVERY_KEYS / SVC_RECOVERY_KEY_VERSION. Without them, the embedded
 * shape generates one key once into `<dataDir>/recovery-keys` (mode 0600) so a laptop install
 * works out of the box; the scale-out shape gets no key, because a file per replica would make
 * replicas unable to read each other's writes.
 */
export function loadKeyRing(env: NodeJS.ProcessEnv, dataDir: string, scaleOut: boolean): KeyRing & { created?: string } {
  const given = env.SVC_RECOVERY_KEYS?.trim();
  if (given) {
    const versions = parseKeyList(given, 'SVC_RECOVERY_KEYS');
    return { versions, inUse: pickInUse(versions, env.SVC_RECOVERY_KEY_VERSION), source: 'env' };
  }
  if (scaleOut) return { versions: new Map(), inUse: null, source: 'none' };
  const dir = resolve(process.cwd(), dataDir);
  const file = resolve(dir, recoveryKeyFile);
  let created: string | undefined;
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    try {
      // 'wx' fails when another process created it first; then that file is read below.
      writeFileSync(file, `v1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      created = 'v1';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const versions = parseKeyList(readFileSync(file, 'utf8'), file);
  return { versions, inUse: pickInUse(versions, env.SVC_RECOVERY_KEY_VERSION), source: 'file', created };
}

function unavailable(message: string): GatewayError {
  return new GatewayError('credential_key_unavailable', message);
}

/**
 * AES-256-GCM encryption of stored credentials. A stored value names its key version:
 * `<version>:<iv b64>:<tag b64>:<ciphertext b64>`. The context (e.g. the provider's name) is
 * bound as associated data, so a ciphertext copied onto another row does not decrypt.
 *
 * @example
 * const stored = credentials.encrypt('sk-…', 'provider:local');
 * credentials.decrypt(stored, 'provider:local'); // 'sk-…'
 */
export class Credentials {
  constructor(private readonly ring: KeyRing) {}

  /** Versions given to this process and the one in use (never the keys), for diagnostics. */
  describe(): { versions: string[]; inUse: string | null; source: KeyRing['source'] } {
    return { versions: [...this.ring.versions.keys()], inUse: this.ring.inUse, source: this.ring.source };
  }

  get inUse(): string | null {
    return this.ring.inUse;
  }

  encrypt(plain: string, context: string): string {
    const version = this.ring.inUse;
    if (version === null) {
      throw unavailable('No recovery key is set, so the provider key cannot be stored: with a shared database, give every replica the same SVC_RECOVERY_KEYS.');
    }
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.ring.versions.get(version)!, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [version, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
  }

  /** The version a stored value was written with. */
  static versionOf(stored: string): string {
    return stored.slice(0, Math.max(0, stored.indexOf(':')));
  }

  /** Throws GatewayError credential_key_unavailable (500) when the value's version was not given or does not match. */
  decrypt(stored: string, context: string): string {
    const parts = stored.split(':');
    const version = parts[0] ?? '';
    const key = this.ring.versions.get(version);
    if (!key) throw unavailable(`A stored credential needs recovery key version ${version || '(none)'}, which this process was not given (SVC_RECOVERY_KEYS).`);
    if (parts.length !== 4) throw unavailable(`A stored credential (version ${version}) is damaged and cannot be read.`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1]!, 'base64'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(parts[2]!, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw unavailable(`A stored credential does not open with the recovery key given as version ${version}; that version's key differs from the one it was stored with.`);
    }
  }
}
