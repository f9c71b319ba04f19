import type { Migration } from '../../kernel/index.js';

/** Routes per workspace; `fallbacks` and `examples` are JSON arrays; `version` changes with the texts. */
const routes = (real: string) => `create table routing_routes (
  workspace_id varchar(40) not null,
  name varchar(64) not null,
  model varchar(300) not null,
  fallbacks text not null,
  description text not null,
  examples text not null,
  enabled integer not null,
  confidence_threshold ${real},
  margin ${real},
  min_chars integer,
  version varchar(40) not null,
  created_at bigint not null,
  updated_at bigint not null,
  primary key (workspace_id, name)
)`;

/** Workspace routing settings (SPEC.md Route: default model, pinned model, routing on/off) and the code route of the signal stage. */
const settings = `create table routing_settings (
  workspace_id varchar(40) primary key,
  default_model varchar(300),
  pinned_model varchar(300),
  routing_enabled integer not null,
  code_route varchar(64),
  updated_at bigint not null
)`;

export const migrations: Migration[] = [
  { id: 'routing-001-routes', sqlite: [routes('real'), settings], postgresql: [routes('double precision'), settings] },
];
