import type { Migration } from '../../kernel/index.js';

const usage = `create table usage_records (
  id varchar(40) primary key,
  created_at bigint not null,
  workspace_id varchar(64),
  person_id varchar(64),
  key_id varchar(64),
  provider varchar(100),
  model varchar(300),
  prompt_tokens integer not null,
  completion_tokens integer not null,
  cached_tokens integer not null,
  reasoning_tokens integer not null,
  cost_micro_usd bigint not null,
  status integer not null,
  error_code varchar(64),
  latency_ms integer not null,
  ttft_ms integer,
  stream smallint not null,
  client_closed smallint not null
)`;

const spans = `create table spans (
  trace_id varchar(40) not null,
  span_id varchar(32) not null,
  parent_span_id varchar(32),
  name varchar(100) not null,
  start_us bigint not null,
  duration_us bigint not null,
  status varchar(16) not null,
  attributes text not null,
  primary key (trace_id, span_id)
)`;

const indexes = [
  'create index usage_records_created on usage_records (created_at)',
  'create index usage_records_workspace on usage_records (workspace_id, created_at)',
  'create index spans_start on spans (start_us)',
];

/** Refusals counted per minute instead of recorded one by one (refusals.ts). */
const refusalCounts = `create table refusal_counts (
  minute_start bigint not null,
  code varchar(64) not null,
  refusals bigint not null,
  primary key (minute_start, code)
)`;

export const migrations: Migration[] = [
  { id: 'tracing-001-usage-and-spans', sqlite: [usage, spans, ...indexes], postgresql: [usage, spans, ...indexes] },
  { id: 'tracing-002-refusal-counts', sqlite: [refusalCounts], postgresql: [refusalCounts] },
];
