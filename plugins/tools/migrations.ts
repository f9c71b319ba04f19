import type { Migration } from '../../kernel/index.js';
import { oauthMigrations } from './oauth/index.js';

/** A workspace's MCP server: `credentials` is a CredentialVault ciphertext bound to the row. */
const servers = `create table tool_servers (
  id varchar(40) primary key,
  workspace_id varchar(40) not null,
  name varchar(40) not null,
  url varchar(2000) not null,
  transport varchar(20) not null,
  credentials text,
  created_at bigint not null
)`;

/** Per tool: enabled, needs approval; the row is made the first time the tool is listed. */
const settings = `create table tool_settings (
  server_id varchar(40) not null,
  tool varchar(200) not null,
  enabled integer not null,
  needs_approval integer not null,
  primary key (server_id, tool)
)`;

/** Tool-server origins the instance admins allow (scheme://host:port). */
const origins = `create table tool_origins (
  origin varchar(400) primary key,
  created_at bigint not null
)`;

/** A waiting (or answered) tool call; `loop` is the stopped loop's state (JSON) to continue from. */
const approvals = `create table tool_approvals (
  id varchar(40) primary key,
  workspace_id varchar(40) not null,
  conversation_id varchar(40) not null,
  person_id varchar(40) not null,
  key_id varchar(40),
  server_id varchar(40) not null,
  tool varchar(200) not null,
  state varchar(20) not null,
  loop text not null,
  created_at bigint not null,
  answered_at bigint
)`;

/** Tools a person approved for good (`x-svc-approve-scope: always`). */
const grants = `create table tool_grants (
  workspace_id varchar(40) not null,
  person_id varchar(40) not null,
  server_id varchar(40) not null,
  tool varchar(200) not null,
  created_at bigint not null,
  primary key (workspace_id, person_id, server_id, tool)
)`;

/** Tool call records: never the arguments, only their size and hash. */
const calls = `create table tool_calls (
  id varchar(40) primary key,
  request_id varchar(40) not null,
  workspace_id varchar(40) not null,
  person_id varchar(40) not null,
  server_id varchar(40) not null,
  tool varchar(200) not null,
  arguments_bytes integer not null,
  arguments_sha256 varchar(64) not null,
  outcome varchar(20) not null,
  duration_ms integer not null,
  approval_id varchar(40),
  created_at bigint not null
)`;

const indexes = [
  'create unique index tool_servers_name on tool_servers (workspace_id, name)',
  'create index tool_calls_ws on tool_calls (workspace_id, created_at)',
  'create index tool_calls_request on tool_calls (request_id)',
  'create index tool_approvals_ws on tool_approvals (workspace_id, state)',
];

const all = [servers, settings, origins, approvals, grants, calls, ...indexes];

/**
 * Command-line (stdio) servers: the command the sandbox starts, its arguments (JSON array) and
 * environment (JSON object; a secret value is null there and sealed in `credentials` with the
 * others, as a JSON object). `url` is empty for them.
 */
const stdio = [
  'alter table tool_servers add column command varchar(64)',
  'alter table tool_servers add column args text',
  'alter table tool_servers add column env text',
];

/**
 * An approval's answer beside the pending record (`answer`: approved or refused; the answering
 * request's id), instead of rewriting its outcome. Records written before held only the answer in
 * `outcome` (every approved or refused record was a pending one): they are pending again with
 * their answer beside; which request answered was not kept.
 */
const answers = [
  'alter table tool_calls add column answer varchar(20)',
  'alter table tool_calls add column answer_request_id varchar(40)',
  "update tool_calls set answer = outcome, outcome = 'pending' where outcome in ('approved', 'refused') and approval_id is not null",
];

export const migrations: Migration[] = [
  { id: 'tools-001-tables', sqlite: all, postgresql: all },
  ...oauthMigrations,
  { id: 'tools-003-stdio', sqlite: stdio, postgresql: stdio },
  { id: 'tools-004-answers', sqlite: answers, postgresql: answers },
];
