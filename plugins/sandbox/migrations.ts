import type { Migration } from '../../kernel/index.js';

/** The instance admins' egress allow-list: `host:port`, and whether it may reach private addresses. */
const allowList = `create table egress_allow_list (
  host varchar(253) not null,
  port integer not null,
  allow_private integer not null,
  created_at bigint not null,
  primary key (host, port)
)`;

export const migrations: Migration[] = [{ id: 'sandbox-001-egress-allow-list', sqlite: [allowList], postgresql: [allowList] }];
