import type { Migration } from '../../kernel/index.js';

/**
 * The identity tables. Portable types only, the same text for both dialects: times are epoch
 * milliseconds in `bigint`, flags are integer 0/1, states are short strings. Persons are never
 * deleted (keys, usage and traces refer to them); they are suspended instead.
 */
const tables = [
  `create table identity_persons (
    id varchar(40) primary key,
    email varchar(320) not null unique,
    name varchar(200),
    password_hash text,
    instance_admin integer not null default 0,
    status varchar(16) not null default 'active',
    created_at bigint not null,
    updated_at bigint not null
  )`,
  `create table identity_sessions (
    id varchar(40) primary key,
    token_hash varchar(64) not null unique,
    person_id varchar(40) not null references identity_persons(id),
    created_at bigint not null,
    expires_at bigint not null
  )`,
  'create index identity_sessions_person on identity_sessions (person_id)',
  // A retention record (SPEC.md Retention): the daily job deletes rows past expires_at.
  `create table identity_password_resets (
    id varchar(40) primary key,
    token_hash varchar(64) not null unique,
    person_id varchar(40) not null references identity_persons(id),
    created_by varchar(40),
    created_at bigint not null,
    expires_at bigint not null
  )`,
  'create index identity_password_resets_expires on identity_password_resets (expires_at)',
  `create table identity_workspaces (
    id varchar(40) primary key,
    name varchar(200) not null,
    created_by varchar(40),
    created_at bigint not null,
    updated_at bigint not null
  )`,
  `create table identity_memberships (
    workspace_id varchar(40) not null references identity_workspaces(id),
    person_id varchar(40) not null references identity_persons(id),
    role varchar(16) not null,
    status varchar(16) not null default 'active',
    created_at bigint not null,
    primary key (workspace_id, person_id)
  )`,
  'create index identity_memberships_person on identity_memberships (person_id)',
  `create table identity_api_keys (
    id varchar(40) primary key,
    workspace_id varchar(40) not null references identity_workspaces(id),
    person_id varchar(40) not null references identity_persons(id),
    name varchar(200) not null,
    key_hash varchar(64) not null unique,
    prefix varchar(16) not null,
    created_at bigint not null,
    last_used_at bigint,
    revoked_at bigint
  )`,
  'create index identity_api_keys_workspace on identity_api_keys (workspace_id)',
];

/**
 * Single sign-on (issue 30): OpenID Connect issuers an instance admin configured (the client
 * secret as the credential vault's ciphertext), the link from an issuer's subject to a person, and
 * instance settings such as whether password sign-in is on.
 */
const oidc = [
  `create table identity_oidc_issuers (
    id varchar(40) primary key,
    name varchar(100) not null unique,
    discovery_url varchar(2000) not null,
    client_id varchar(500) not null,
    client_secret text,
    allowed_domains text not null,
    admin_claim varchar(200),
    admin_value varchar(200),
    create_persons integer not null default 0,
    enabled integer not null default 1,
    created_at bigint not null,
    updated_at bigint not null
  )`,
  `create table identity_oidc_links (
    issuer_id varchar(40) not null references identity_oidc_issuers(id),
    subject varchar(255) not null,
    person_id varchar(40) not null references identity_persons(id),
    created_at bigint not null,
    primary key (issuer_id, subject)
  )`,
  `create table identity_settings (
    name varchar(64) primary key,
    value text not null,
    updated_at bigint not null
  )`,
];

export const migrations: Migration[] = [
  { id: 'identity-001-tables', sqlite: tables, postgresql: tables },
  { id: 'identity-002-oidc', sqlite: oidc, postgresql: oidc },
];
