import type { RetentionKind } from '../../kernel/index.js';

/** Password reset links past their expiry go at the next retention run (SPEC.md "Retention"). */
export const identityRetention: RetentionKind[] = [
  {
    kind: 'password_resets',
    summary: 'Expired password reset links',
    table: 'identity_password_resets',
    keyColumn: 'id',
    timeColumn: 'expires_at',
    defaultDays: 'expired',
  },
];
