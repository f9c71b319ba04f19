import { definePlugin, RetentionToken, type Migration } from '../../kernel/index.js';

/**
 * Stands in for kinds whose owners do not register them yet (conversations' period, tool sign-ins):
 * it owns tables shaped like theirs and registers them through the retention contract exactly as
 * those plugins will. Tool call records are the tools plugin's own (registered by it).
 */
const tables = [
  'create table t_conversations (id varchar(40) primary key, workspace_id varchar(40), updated_at bigint not null)',
  "create table t_tool_signins (id varchar(40) primary key, state varchar(16) not null, expires_at bigint not null)",
];
const migrations: Migration[] = [{ id: 'later-kinds-001', sqlite: tables, postgresql: tables }];

export default definePlugin({
  name: 'later-kinds',
  migrations,
  register() {},
  start(ctx) {
    const retention = ctx.use(RetentionToken);
    retention.register({ kind: 'conversations', summary: 'Conversations', table: 't_conversations', keyColumn: 'id', timeColumn: 'updated_at', defaultDays: null });
    retention.register({ kind: 'tool_signins', summary: 'Unfinished tool sign-ins', table: 't_tool_signins', keyColumn: 'id', timeColumn: 'expires_at', defaultDays: 'expired', where: "state = 'pending'" });
  },
});
