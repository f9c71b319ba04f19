import type { Migration } from '../../kernel/index.js';

/** A conversation of one person in one workspace; `decision` is the kept routing decision (JSON), set once. */
const conversations = `create table conversations (
  id varchar(40) primary key,
  workspace_id varchar(40) not null,
  person_id varchar(40) not null,
  key_id varchar(40),
  title varchar(200),
  decision text,
  created_at bigint not null,
  updated_at bigint not null
)`;

/** Its history: the messages each request added and the replies, in order (`position` within a request). */
const messages = `create table conversation_messages (
  id varchar(40) primary key,
  conversation_id varchar(40) not null,
  request_id varchar(40) not null,
  position integer not null,
  message text not null,
  model varchar(300),
  created_at bigint not null
)`;

const indexes = [
  'create index conversations_owner on conversations (workspace_id, person_id, created_at)',
  'create index conversation_messages_conv on conversation_messages (conversation_id, created_at, position)',
];

export const migrations: Migration[] = [
  { id: 'conversations-001-tables', sqlite: [conversations, messages, ...indexes], postgresql: [conversations, messages, ...indexes] },
];
