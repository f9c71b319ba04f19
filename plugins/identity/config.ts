import { Type, type Static } from '../../kernel/index.js';

/** Failures allowed before waits begin, and the failure that locks. */
function limits(freeFailures: number, lockAfterFailures: number) {
  return Type.Object(
    {
      freeFailures: Type.Integer({ minimum: 0, default: freeFailures }),
      lockAfterFailures: Type.Integer({ minimum: 1, default: lockAfterFailures }),
    },
    { additionalProperties: false, default: {} },
  );
}

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
    /**
     * Always adds `Secure` to the session cookie. Without it the cookie is `Secure` whenever the
     * request came over HTTPS: a TLS socket, or `X-Forwarded-Proto: https` from a proxy listed in
     * `server.trustedProxies`.
     */
    secureCookie: Type.Boolean({ default: false }),
    /**
     * svc's address as browsers reach it (`https://svc.example.com`), for the single sign-on
     * redirect URI; empty: taken from each request's host (and HTTPS as the kernel judges it).
     */
    publicUrl: Type.String({ default: '' }),
    /** Throttling of failed sign-ins and password resets (throttle.ts, README "Protected sign-in"). */
    signInThrottle: Type.Object(
      {
        account: limits(5, 10),
        address: limits(20, 100),
        /** The wait after the first failure past `freeFailures`; it doubles with each further one. */
        firstDelayMs: Type.Integer({ minimum: 1, default: 1000 }),
        lockSeconds: Type.Integer({ minimum: 1, default: 900 }),
        /** Failures are forgotten this long after the first one (a lock renews the count). */
        windowSeconds: Type.Integer({ minimum: 1, default: 3600 }),
      },
      { additionalProperties: false, default: {} },
    ),
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
  | 'key_revoked'
  | 'sign_in_unlocked';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'identity.audit': { action: IdentityAction; actor_id: string | null; subject_id: string; workspace_id: string | null };
    'identity.sign_in_failed': { person_id: string | null; reason: 'unknown_email' | 'wrong_password' | 'suspended' };
    'auth.sign_in_throttled': {
      action: 'sign_in' | 'password_reset';
      scope: 'account' | 'address';
      state: 'delayed' | 'locked';
      failures: number;
      retry_after_s: number;
      person_id: string | null;
      client_address: string;
    };
    'auth.throttle_unavailable': { count: number };
    'identity.bootstrap_skipped': { reason: 'admin_exists' | 'email_taken' };
    'identity.snapshot_loaded': { persons: number; keys: number; sessions: number; duration_ms: number };
    'identity.snapshot_failed': { error_code: string };
    'identity.subscribe_failed': { error_code: string };
    'identity.last_used_flushed': { keys: number };
    'identity.last_used_flush_failed': { keys: number; error_code: string };
  }
}
