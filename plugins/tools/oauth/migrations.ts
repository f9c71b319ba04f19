import type { Migration } from '../../../kernel/index.js';

/**
 * One row per tool server registered with `auth: "oauth"`. `client` and `tokens` are
 * CredentialVault ciphertexts bound to the row; `flow` is the discovery of the last completed
 * sign-in (authorization server metadata, resource; public documents, needed to refresh).
 * `version` grows with every write of `tokens`, so a refresh on one replica never overwrites a
 * newer one from another. `access_expires_at` and `refreshable` are plain so that a listing can
 * say `expired` without decrypting anything.
 */
const oauth = `create table tool_oauth (
  server_id varchar(40) primary key,
  workspace_id varchar(40) not null,
  client text,
  scope varchar(1000),
  flow text,
  tokens text,
  state varchar(20) not null,
  version integer not null,
  access_expires_at bigint,
  refreshable integer not null,
  updated_at bigint not null
)`;

/**
 * Unfinished sign-ins: started (the admin was sent to the authorization server), not yet called
 * back. `id` is the SHA-256 of the `state` parameter; `verifier` (PKCE) is a vault ciphertext;
 * `browser` the SHA-256 of the nonce cookie when the start came from a browser session. A callback
 * consumes its row; the retention job removes rows past `expires_at` at its next run.
 */
const signIns = `create table tool_signins (
  id varchar(64) primary key,
  workspace_id varchar(40) not null,
  server_id varchar(40) not null,
  person_id varchar(40) not null,
  verifier text not null,
  flow text not null,
  browser varchar(64),
  created_at bigint not null,
  expires_at bigint not null
)`;

const all = [oauth, signIns, 'create index tool_oauth_ws on tool_oauth (workspace_id)', 'create index tool_signins_expiry on tool_signins (expires_at)'];

/** The OAuth sign-in's tables, a migration of its own after tools-001 (plugins/tools/oauth/README.md). */
export const oauthMigrations: Migration[] = [{ id: 'tools-002-oauth', sqlite: all, postgresql: all }];
