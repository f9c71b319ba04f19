import { Type, type Static } from '../../kernel/index.js';

/** The plugin's config section (`plugins.identity.config`); every field has a default. */
export const IdentityConfigSchema = Type.Object(
  {
    /** How long a sign-in lasts. */
    sessionTtlSeconds: Type.Integer({ minimum: 1, default: 30 * 24 * 3600 }),
    /** How long a password-reset link works. */
    resetTtlSeconds: Type.Integer({ minimum: 1, default: 3600 }),
    minPasswordLength: Type.Integer({ minimum: 8, default: 10 }),
    /** Safety-net reload of the in-memory snapshot, besides the change messages. */
    reloadIntervalMs: Type.Integer({ minimum: 1000, default: 30_000 }),
    /** How often key last-used times are written (and always at stop). */
    lastUsedFlushMs: Type.Integer({ minimum: 100, default: 30_000 }),
    /** Adds `Secure` to the session cookie; turn on when the service is reached over HTTPS only. */
    secureCookie: Type.Boolean({ default: false }),
  },
  { additionalProperties: false, default: {} },
);

export type IdentityConfig = Static<typeof IdentityConfigSchema>;

/** Changes worth an audit line; the fields carry ids only, never emails, names or credentials. */
export type IdentityAction =
  | 'admin_bootstrapped'
  | 'signed_in'
  | 'signed_out'
  | 'password_changed'
  | 'password_reset_created'
  | 'password_reset_used'
  | 'person_created'
  | 'person_updated'
  | 'person_deleted'
  | 'workspace_created'
  | 'workspace_renamed'
  | 'member_added'
  | 'member_updated'
  | 'member_removed'
  | 'key_created'
  | 'key_revoked';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'identity.audit': { action: IdentityAction; actor_id: string | null; subject_id: string; workspace_id: string | null };
    'identity.sign_in_failed': { person_id: string | null; reason: 'unknown_email' | 'wrong_password' | 'suspended' };
    'identity.bootstrap_skipped': { reason: 'admin_exists' | 'email_taken' };
    'identity.snapshot_loaded': { persons: number; keys: number; sessions: number; duration_ms: number };
    'identity.snapshot_failed': { error_code: string };
    'identity.subscribe_failed': { error_code: string };
    'identity.last_used_flushed': { keys: number };
    'identity.last_used_flush_failed': { keys: number; error_code: string };
  }
}
