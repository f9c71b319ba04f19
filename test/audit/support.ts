import type { AuditEntryInput } from '../../kernel/index.js';
import type { Admin } from '../support/provision.js';

/** An audit entry as GET /admin/v1/audit-entries lists it. */
export type Entry = Omit<AuditEntryInput, 'route'> & { id: string; created_at: string; route: string | null };

/** The entries matching `query` (e.g. `?action=keys.create`), newest first. */
export async function entries(admin: Admin, query = ''): Promise<Entry[]> {
  return (await admin.ok<{ data: Entry[] }>('GET', `/audit-entries${query}`)).data;
}

/** An entry without what changes from run to run (its id, time and request id). */
export function entry(e: Entry): Omit<Entry, 'id' | 'created_at' | 'request_id'> {
  const { id: _id, created_at: _at, request_id: _req, ...rest } = e;
  return rest;
}

/** Values sent to the admin API that must never be kept in an entry. */
export const secrets = {
  wrongPassword: 'canary-audit-wrong-pw-18c2',
  unknownEmail: 'canary-typed-email@example.test',
  personEmail: 'canary-person@example.test',
  personPassword: 'canary-person-pw-77e1aa',
  providerKey: 'sk-canary-provider-key-5b9d0f',
  toolToken: 'canary-tool-bearer-3e8a',
  extra: [] as string[],
  all(): string[] {
    return [this.wrongPassword, this.unknownEmail, this.personEmail, this.personPassword, this.providerKey, this.toolToken, ...this.extra];
  },
};
