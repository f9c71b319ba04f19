import type { RetentionKind } from '../../kernel/index.js';

/**
 * Conversations under the retention job (SPEC.md "Retention": kept until deleted, unless a period
 * is set). A conversation goes when its last activity (`updated_at`, moved by every exchange) is
 * older than the period; its history follows at the same run, as rows whose conversation is gone.
 */
export const conversationRetention: RetentionKind[] = [
  {
    kind: 'conversations',
    summary: 'Conversations, by their last activity',
    table: 'conversations',
    keyColumn: 'id',
    timeColumn: 'updated_at',
    defaultDays: null,
  },
  {
    // Registered after `conversations`, so one run removes a conversation and then its history.
    kind: 'conversation_history',
    summary: 'History of conversations that retention removed',
    table: 'conversation_messages',
    keyColumn: 'conversation_id',
    timeColumn: 'created_at',
    defaultDays: 'expired',
    where: 'conversation_id not in (select id from conversations)',
  },
];
