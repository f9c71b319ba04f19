import { Type, type Static } from '../../kernel/index.js';

/** The plugin's config section (`plugins.budgets.config`); every field has a default (README). */
export const BudgetsConfigSchema = Type.Object(
  {
    /** Input bound: max(o200k, cl100k) count × (100 + marginPercent) / 100, for vendors whose tokenizers count more. */
    marginPercent: Type.Integer({ minimum: 0, maximum: 400, default: 25 }),
    messageOverheadTokens: Type.Integer({ minimum: 0, default: 8 }),
    requestOverheadTokens: Type.Integer({ minimum: 0, default: 16 }),
    /** One image at its largest billed size (OpenAI high detail ≤ 1,445; Anthropic ≈ 1,600). */
    imageTokens: Type.Integer({ minimum: 0, default: 2000 }),
    /** One PDF page: its text plus a page image. */
    pdfPageTokens: Type.Integer({ minimum: 0, default: 5000 }),
    /** Characters tokenized per request (texts counted before are free); the rest is bounded by its UTF-8 size. */
    tokenizeMaxChars: Type.Integer({ minimum: 1000, default: 32_000 }),
    /** A hold not settled (nor kept alive by its process) this long after it was taken is reaped as abandoned. */
    holdExpirySeconds: Type.Integer({ minimum: 1, default: 900 }),
    /**
     * Redis only: holds a replica reserves ahead, in one cache call, for a key that starts at least
     * 8 holds a second, so its requests go upstream without a round trip first (README "Holds
     * reserved ahead"); 0 turns it off.
     */
    holdsAhead: Type.Integer({ minimum: 0, maximum: 256, default: 16 }),
    /** How often expired holds are reaped and live ones kept alive. */
    reaperIntervalMs: Type.Integer({ minimum: 50, default: 15_000 }),
    /** How often running totals are reloaded into memory (and the database checked). */
    totalsRefreshMs: Type.Integer({ minimum: 50, default: 5000 }),
    /** How often charges and ended holds are written (always at stop). */
    flushIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
    /** Safety-net reload of caps and settings, besides the change messages. */
    snapshotReloadMs: Type.Integer({ minimum: 1000, default: 30_000 }),
    /** Cache counters live this long past their period's end. */
    counterGraceSeconds: Type.Integer({ minimum: 60, default: 86_400 }),
    /** Alert thresholds (percent of the cap) for caps created without their own. */
    defaultThresholds: Type.Array(Type.Integer({ minimum: 1, maximum: 1000 }), { default: [50, 80, 100] }),
    /** Ended-hold records kept while the database does not answer; later ones are dropped (README "Faults"). */
    maxBufferedRows: Type.Integer({ minimum: 1, default: 20_000 }),
    /** Repeated failures are logged at most once per this interval, with a count. */
    logIntervalMs: Type.Integer({ minimum: 10, default: 10_000 }),
    /** Refuse model requests (503 budget_unavailable) while the database cannot be reached. */
    failClosedOnDatabase: Type.Boolean({ default: true }),
    alertWebhook: Type.Object(
      {
        /** Where alerts are POSTed; the admin setting, when set, takes precedence. */
        url: Type.Optional(Type.String({ pattern: '^https?://' })),
        /** Environment variable holding the HMAC secret (never the secret itself in config). */
        secretEnv: Type.String({ default: 'SVC_BUDGET_ALERT_SECRET' }),
        attempts: Type.Integer({ minimum: 1, maximum: 20, default: 6 }),
        backoffMs: Type.Integer({ minimum: 1, default: 1000 }),
        timeoutMs: Type.Integer({ minimum: 100, default: 5000 }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);

export type BudgetsConfig = Static<typeof BudgetsConfigSchema>;

declare module '../../kernel/index.js' {
  interface LogEvents {
    'budget.alert_delivered': { alert_id: string; scope: string; threshold: number; attempts: number };
    'budget.alert_given_up': { alert_id: string; scope: string; threshold: number; attempts: number };
    'budget.holds_reaped': { count: number };
    'budget.reap_failed': { error_code: string; count: number };
    /** A hold whose process died after committing its charge, before moving the counters: moved by a reaper. */
    'budget.settle_recovered': { hold_id: string };
    'budget.settle_failed': { hold_id: string; attempts: number };
    'budget.flush_failed': { table: string; rows: number; error_code: string; count: number };
    'budget.rows_dropped': { table: string; count: number };
    'budget.database_down': { error_code: string };
    'budget.database_up': Record<string, never>;
    'budget.snapshot_failed': { error_code: string };
    'budget.webhook_secret_unreadable': Record<string, never>;
    'budget.cap_changed': { cap_id: string; scope: string; action: 'created' | 'updated' | 'deleted'; actor_id: string };
  }
}
