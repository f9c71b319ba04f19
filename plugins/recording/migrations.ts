import type { Migration } from '../../kernel/index.js';

/** A workspace's choice: recording on or off, and how many days recordings are kept (1 to 90). */
const settings = `create table recording_settings (
  workspace_id varchar(40) primary key,
  enabled smallint not null,
  days integer not null,
  updated_at bigint not null
)`;

/** Recorded prompts and replies, apart from spans (spans never hold text). */
const recordings = `create table recordings (
  request_id varchar(40) primary key,
  workspace_id varchar(40) not null,
  created_at bigint not null,
  messages text not null,
  reply text
)`;

const indexes = ['create index recordings_workspace on recordings (workspace_id, created_at)'];

export const migrations: Migration[] = [
  { id: 'recording-001-settings-recordings', sqlite: [settings, recordings, ...indexes], postgresql: [settings, recordings, ...indexes] },
];
