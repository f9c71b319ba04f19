import type { Migration } from '../../kernel/index.js';

const caps = `create table budget_caps (
  id varchar(40) primary key,
  scope varchar(16) not null,
  workspace_id varchar(40) not null,
  subject_id varchar(40) not null,
  amount_micro_usd bigint not null,
  period varchar(16) not null,
  thresholds varchar(200) not null,
  created_at bigint not null,
  updated_at bigint not null
)`;

/** Running totals per scope and period: their own records, never recomputed from usage records. */
const totals = `create table budget_totals (
  total_key varchar(200) primary key,
  total_micro_usd bigint not null,
  updated_at bigint not null
)`;

/** Holds that are over (settled, refused, abandoned): a retention record (SPEC.md Retention). */
const holds = `create table budget_holds (
  id varchar(40) primary key,
  request_id varchar(40) not null,
  workspace_id varchar(40),
  person_id varchar(40),
  key_id varchar(40),
  model varchar(300),
  amount_micro_usd bigint not null,
  charge_micro_usd bigint,
  state varchar(16) not null,
  created_at bigint not null,
  ended_at bigint not null
)`;

/** Budget alerts: one per cap, period and threshold; recorded as sent or given up on. */
const alerts = `create table budget_alerts (
  id varchar(40) primary key,
  cap_id varchar(40) not null,
  scope varchar(16) not null,
  scope_id varchar(100) not null,
  period varchar(16) not null,
  period_key varchar(20) not null,
  threshold integer not null,
  amount_micro_usd bigint not null,
  spent_micro_usd bigint not null,
  state varchar(16) not null,
  attempts integer not null,
  created_at bigint not null,
  updated_at bigint not null
)`;

/** Workspace settings (budget fallback model) and, under workspace_id '*', the alert webhook. */
const settings = `create table budget_settings (
  workspace_id varchar(40) primary key,
  fallback_model varchar(300),
  webhook_url varchar(2000),
  webhook_secret varchar(500),
  updated_at bigint not null
)`;

const indexes = [
  'create unique index budget_caps_target on budget_caps (scope, workspace_id, subject_id, period)',
  'create index budget_holds_ended on budget_holds (ended_at)',
  'create unique index budget_alerts_once on budget_alerts (cap_id, period_key, threshold)',
  'create index budget_alerts_created on budget_alerts (created_at)',
];

export const migrations: Migration[] = [
  {
    id: 'budgets-001-caps-totals-holds-alerts',
    sqlite: [caps, totals, holds, alerts, settings, ...indexes],
    postgresql: [caps, totals, holds, alerts, settings, ...indexes],
  },
];
