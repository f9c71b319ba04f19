import type { Migration } from '../../kernel/index.js';

/** 396 days (13 months) in milliseconds: no entry younger than this may be deleted, by anything. */
export const keptMs = 396 * 86_400_000;

/**
 * One row per administrative action (issue 30). `fields` is a JSON array of dotted field paths,
 * `field_values` a JSON object of the values safe to keep (kernel/contracts/audit.ts).
 */
const table = `create table audit_entries (
  id varchar(40) primary key,
  created_at bigint not null,
  action varchar(100) not null,
  outcome varchar(16) not null,
  actor_id varchar(40),
  actor_via varchar(16),
  actor_key_id varchar(40),
  client_address varchar(64),
  request_id varchar(64),
  route varchar(300),
  resource_type varchar(64) not null,
  resource_id varchar(200),
  workspace_id varchar(40),
  fields text not null,
  field_values text not null,
  error_code varchar(64)
)`;

const indexes = [
  'create index audit_entries_created on audit_entries (created_at)',
  'create index audit_entries_actor on audit_entries (actor_id, created_at)',
  'create index audit_entries_workspace on audit_entries (workspace_id, created_at)',
  'create index audit_entries_action on audit_entries (action, created_at)',
];

/**
 * Append-only in the database itself, for every writer: no update ever, and no delete of an entry
 * younger than 13 months (the retention kind cannot be set shorter, so its purge never trips this).
 */
const sqliteGuards = [
  `create trigger audit_entries_no_update before update on audit_entries
   begin select raise(abort, 'audit entries are append-only'); end`,
  `create trigger audit_entries_no_early_delete before delete on audit_entries
   when old.created_at > cast(strftime('%s', 'now') as integer) * 1000 - ${keptMs}
   begin select raise(abort, 'audit entries are kept 13 months'); end`,
];

const postgresGuards = [
  `create function audit_entries_guard() returns trigger language plpgsql as $$
   begin
     if tg_op = 'UPDATE' then raise exception 'audit entries are append-only'; end if;
     if old.created_at > (extract(epoch from clock_timestamp()) * 1000)::bigint - ${keptMs} then
       raise exception 'audit entries are kept 13 months';
     end if;
     return old;
   end $$`,
  `create trigger audit_entries_guard before update or delete on audit_entries
   for each row execute function audit_entries_guard()`,
];

export const migrations: Migration[] = [
  { id: 'audit-001-entries', sqlite: [table, ...indexes, ...sqliteGuards], postgresql: [table, ...indexes, ...postgresGuards] },
];
