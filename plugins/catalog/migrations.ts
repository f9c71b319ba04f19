import type { Migration } from '../../kernel/index.js';

// Plain SQL both dialects accept. Booleans are 0/1 integers and times ISO-8601 text so that rows
// read back identically from SQLite and PostgreSQL; prices are bigint micro-USD per million tokens.
const providers = `create table catalog_providers (
  name varchar(63) primary key,
  vendor varchar(40) not null,
  address varchar(2000) not null,
  api_key_enc text,
  check_status varchar(20) not null default 'unchecked',
  checked_at varchar(40),
  created_at varchar(40) not null,
  updated_at varchar(40) not null
)`;

// No foreign key to catalog_providers: a removed provider's models stay (SPEC.md "Remove provider").
const models = `create table catalog_models (
  name varchar(400) primary key,
  provider varchar(63) not null,
  upstream_id varchar(300) not null,
  display_name varchar(400) not null,
  context_window integer not null,
  output_limit integer not null,
  input_micro_usd_per_mtok bigint,
  output_micro_usd_per_mtok bigint,
  can_read_images integer not null default 0,
  can_read_pdf integer not null default 0,
  can_call_tools integer not null default 0,
  created_at varchar(40) not null,
  updated_at varchar(40) not null
)`;

const index = 'create index catalog_models_provider on catalog_models (provider)';

// Keys of built-in providers: workspace_id '' holds the instance-wide key, any other value one
// workspace's own (SPEC.md: workspace-level keys exist only for built-in providers).
const builtinKeys = `create table catalog_builtin_keys (
  provider varchar(63) not null,
  workspace_id varchar(100) not null,
  api_key_enc text not null,
  check_status varchar(20) not null default 'unchecked',
  checked_at varchar(40),
  created_at varchar(40) not null,
  updated_at varchar(40) not null,
  primary key (provider, workspace_id)
)`;

// An admin's hide or re-price of a built-in model; the catalogue itself is code, not rows.
const overrides = `create table catalog_model_overrides (
  name varchar(400) primary key,
  hidden integer not null default 0,
  input_micro_usd_per_mtok bigint,
  output_micro_usd_per_mtok bigint,
  updated_at varchar(40) not null
)`;

// The signed feed list in force over the committed catalogue (catalogue-feed plugin): one row, id 1.
const feedList = `create table catalog_feed_list (
  id integer primary key,
  sequence bigint not null,
  issued_at varchar(40) not null,
  digest varchar(64) not null,
  providers text not null,
  applied_at varchar(40) not null
)`;

const addOutputLimit = 'alter table catalog_model_overrides add column output_limit integer';

// An instance admin's address for a built-in provider (a regional endpoint, an egress proxy) over
// its own or the config's; no row means the built-in's default (issue 27).
const builtinAddresses = `create table catalog_builtin_addresses (
  provider varchar(63) primary key,
  address varchar(2000) not null,
  updated_at varchar(40) not null
)`;

/** The catalog's tables. */
export const migrations: Migration[] = [
  { id: 'catalog-001-providers-models', sqlite: [providers, models, index], postgresql: [providers, models, index] },
  { id: 'catalog-002-builtin-keys-overrides', sqlite: [builtinKeys, overrides], postgresql: [builtinKeys, overrides] },
  // A model's own upstream deadlines over its provider's (JSON, null for none): issue 19.
  { id: 'catalog-003-model-deadlines', sqlite: ['alter table catalog_models add column deadlines text'], postgresql: ['alter table catalog_models add column deadlines text'] },
  { id: 'catalog-004-feed-list', sqlite: [feedList], postgresql: [feedList] },
  // An admin's lower output limit for a built-in model (null keeps the catalogue's): smaller holds.
  { id: 'catalog-005-override-output-limit', sqlite: [addOutputLimit], postgresql: [addOutputLimit] },
  { id: 'catalog-006-builtin-addresses', sqlite: [builtinAddresses], postgresql: [builtinAddresses] },
];
