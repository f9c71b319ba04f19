import type { Migration } from '../../kernel/index.js';

/** Periods an instance admin set; a kind without a row uses its default. `days` null = until deleted. */
const periods = `create table retention_periods (
  kind varchar(64) primary key,
  days integer,
  updated_at bigint not null
)`;

/**
 * One row per run. A scheduled run's id is its slot (`schedule:<UTC minute>`): the replica whose
 * insert lands runs it, every other replica sees the row and skips (the database is the lock).
 */
const runs = `create table retention_runs (
  id varchar(80) primary key,
  run_trigger varchar(16) not null,
  status varchar(16) not null,
  started_at bigint not null,
  duration_ms integer,
  counts text
)`;

export const migrations: Migration[] = [
  {
    id: 'retention-001-periods-runs',
    sqlite: [periods, runs, 'create index retention_runs_started on retention_runs (started_at)'],
    postgresql: [periods, runs, 'create index retention_runs_started on retention_runs (started_at)'],
  },
];
