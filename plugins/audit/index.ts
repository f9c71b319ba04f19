import { AdminApiToken, AuditToken, definePlugin, RetentionToken, StoreToken } from '../../kernel/index.js';
import { AuditEntries } from './entries.js';
import { keptMs, migrations } from './migrations.js';
import { auditRoutes } from './routes.js';

/**
 * The audit log of administrative actions (issue 30): provides `AuditToken`, which admin-api
 * calls for every change made through the admin API and other plugins call for actions taken
 * elsewhere; lists entries in the admin API; keeps them 13 months through the retention job.
 */
export default definePlugin({
  name: 'audit',
  dependsOn: ['admin-api'],
  migrations,
  register(ctx) {
    const entries = new AuditEntries(ctx.use(StoreToken), ctx.log);
    ctx.provide(AuditToken, entries);
    auditRoutes(ctx.use(AdminApiToken), entries);
  },
  start(ctx) {
    // 13 months, and no shorter: an admin must not be able to age out their own trail early.
    ctx.optional(RetentionToken)?.register({
      kind: 'audit_entries', summary: 'Audit log entries', table: 'audit_entries', keyColumn: 'id', timeColumn: 'created_at',
      defaultDays: 396, minDays: 396, maxDays: 3650,
      // The database refuses to delete younger entries by its own clock (migrations.ts); a run
      // with a later `now` (tests, a fast clock) must stay clear of them too.
      floor: (now) => Math.min(now.getTime(), Date.now()) - keptMs,
    });
  },
});
