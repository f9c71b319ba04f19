import { defineToken } from '../container/tokens.js';

/**
 * Encryption of stored credentials (SPEC.md Authentication 7): AES-256-GCM under the recovery key
 * version in use; each ciphertext names its version and is bound to its `context` (the row it
 * belongs to), so a value copied onto another row does not open. Provided by the catalog plugin.
 *
 * @example
 * const stored = vault.encrypt(secret, 'budgets.webhook');
 * vault.decrypt(stored, 'budgets.webhook'); // throws GatewayError credential_key_unavailable (500) when its version is missing
 */
export interface CredentialVault {
  encrypt(plain: string, context: string): string;
  decrypt(stored: string, context: string): string;
}

export const CredentialVaultToken = defineToken<CredentialVault>('catalog.credentials');
