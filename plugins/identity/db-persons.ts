import type { Store } from '../../kernel/index.js';
import { newId, sha256 } from './secrets.js';
import { num, type Status } from './snapshot.js';
import { iso, type PersonViewT } from './views.js';

type Row = Record<string, unknown>;

/** A person row with its password hash: read for sign-in and password checks only, never rendered. */
export interface PersonRecord {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string | null;
  instanceAdmin: boolean;
  status: Status;
  createdAt: number;
}

const personColumns = 'id, email, name, password_hash, instance_admin, status, created_at';

function toPerson(r: Row): PersonRecord {
  return {
    id: String(r.id),
    email: String(r.email),
    name: r.name === null || r.name === undefined ? null : String(r.name),
    passwordHash: r.password_hash === null || r.password_hash === undefined ? null : String(r.password_hash),
    instanceAdmin: num(r.instance_admin) === 1,
    status: r.status as Status,
    createdAt: num(r.created_at),
  };
}

/** What the API shows of a person: never the hash, only whether one is set. */
export function personView(p: PersonRecord): PersonViewT {
  return { id: p.id, email: p.email, name: p.name, instance_admin: p.instanceAdmin, status: p.status, password_set: p.passwordHash !== null, created_at: iso(p.createdAt) };
}

/** Emails are compared without case and surrounding space. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** A unique-constraint failure from either driver (a race lost to another request or replica). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { name?: string; code?: string; message?: string };
  return e.name === 'UniqueConstraintViolationException' || e.code === '23505' || /unique/i.test(e.message ?? '');
}

export async function personByEmail(store: Store, email: string): Promise<PersonRecord | null> {
  const rows = await store.execute<Row>(`select ${personColumns} from identity_persons where email = ?`, [normaliseEmail(email)]);
  return rows[0] ? toPerson(rows[0]) : null;
}

export async function personById(store: Store, id: string): Promise<PersonRecord | null> {
  const rows = await store.execute<Row>(`select ${personColumns} from identity_persons where id = ?`, [id]);
  return rows[0] ? toPerson(rows[0]) : null;
}

export async function listPersons(store: Store): Promise<PersonRecord[]> {
  return (await store.execute<Row>(`select ${personColumns} from identity_persons order by created_at, id`)).map(toPerson);
}

export async function instanceAdminExists(store: Store): Promise<boolean> {
  const rows = await store.execute<Row>('select id from identity_persons where instance_admin = 1 limit 1');
  return rows.length > 0;
}

export interface NewPerson {
  email: string;
  name: string | null;
  passwordHash: string | null;
  instanceAdmin: boolean;
}

/** Inserts a person; throws a unique violation when the email is taken. */
export async function insertPerson(store: Store, p: NewPerson): Promise<PersonRecord> {
  const now = Date.now();
  const record: PersonRecord = { id: newId('per'), email: normaliseEmail(p.email), name: p.name, passwordHash: p.passwordHash, instanceAdmin: p.instanceAdmin, status: 'active', createdAt: now };
  await store.execute(
    'insert into identity_persons (id, email, name, password_hash, instance_admin, status, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
    [record.id, record.email, record.name, record.passwordHash, record.instanceAdmin ? 1 : 0, record.status, now, now],
  );
  return record;
}

/** Changes status, name or the instance-admin flag; suspending also ends every session. */
export async function updatePerson(store: Store, id: string, change: { status?: Status; name?: string | null; instanceAdmin?: boolean }): Promise<void> {
  await store.transaction(async (exec) => {
    const now = Date.now();
    if (change.status !== undefined) await exec('update identity_persons set status = ?, updated_at = ? where id = ?', [change.status, now, id]);
    if (change.name !== undefined) await exec('update identity_persons set name = ?, updated_at = ? where id = ?', [change.name, now, id]);
    if (change.instanceAdmin !== undefined) await exec('update identity_persons set instance_admin = ?, updated_at = ? where id = ?', [change.instanceAdmin ? 1 : 0, now, id]);
    if (change.status === 'suspended') await exec('delete from identity_sessions where person_id = ?', [id]);
  });
}

/**
 * Removes a person for good: their sessions, reset links, memberships and API keys (revoked keys
 * too), then the person. Usage records and traces keep the person's id.
 */
export async function deletePerson(store: Store, id: string): Promise<void> {
  await store.transaction(async (exec) => {
    for (const table of ['identity_sessions', 'identity_password_resets', 'identity_memberships', 'identity_api_keys']) {
      await exec(`delete from ${table} where person_id = ?`, [id]);
    }
    await exec('delete from identity_persons where id = ?', [id]);
  });
}

/** Workspaces where this person is the only active admin (removing them would leave none). */
export async function soleAdminOf(store: Store, id: string): Promise<string[]> {
  const rows = await store.execute<Record<string, unknown>>(
    `select w.name from identity_memberships m join identity_workspaces w on w.id = m.workspace_id
     where m.person_id = ? and m.role = 'admin' and m.status = 'active'
       and (select count(*) from identity_memberships o where o.workspace_id = m.workspace_id and o.role = 'admin' and o.status = 'active') = 1
     order by w.name`,
    [id],
  );
  return rows.map((r) => String(r.name));
}

/** Sets a new password hash and ends the person's sessions, except `keepSessionId`. */
export async function setPassword(store: Store, id: string, hash: string, keepSessionId: string | null): Promise<void> {
  await store.transaction(async (exec) => {
    await exec('update identity_persons set password_hash = ?, updated_at = ? where id = ?', [hash, Date.now(), id]);
    await exec('delete from identity_sessions where person_id = ? and id <> ?', [id, keepSessionId ?? '']);
  });
}

/** Stores a session for `token` (only its hash); expired sessions are swept on the way. */
export async function insertSession(store: Store, personId: string, token: string, ttlMs: number): Promise<{ id: string; expiresAt: number }> {
  const now = Date.now();
  const session = { id: newId('ses'), expiresAt: now + ttlMs };
  await store.transaction(async (exec) => {
    await exec('delete from identity_sessions where expires_at <= ?', [now]);
    await exec('insert into identity_sessions (id, token_hash, person_id, created_at, expires_at) values (?, ?, ?, ?, ?)', [session.id, sha256(token), personId, now, session.expiresAt]);
  });
  return session;
}

export async function deleteSession(store: Store, id: string): Promise<void> {
  await store.execute('delete from identity_sessions where id = ?', [id]);
}

/** Stores a one-time reset link for `token` (only its hash), replacing the person's earlier ones. */
export async function insertReset(store: Store, personId: string, token: string, ttlMs: number, createdBy: string): Promise<{ id: string; expiresAt: number }> {
  const now = Date.now();
  const reset = { id: newId('rst'), expiresAt: now + ttlMs };
  await store.transaction(async (exec) => {
    await exec('delete from identity_password_resets where person_id = ?', [personId]);
    await exec('insert into identity_password_resets (id, token_hash, person_id, created_by, created_at, expires_at) values (?, ?, ?, ?, ?, ?)', [reset.id, sha256(token), personId, createdBy, now, reset.expiresAt]);
  });
  return reset;
}

/**
 * Uses a reset link: in one transaction the unexpired link is deleted by hash (so it works once,
 * even when two requests race), the new password set and every session ended. Returns the person
 * id, or null when the link is unknown, used or expired (expired rows stay for the retention job).
 */
export async function consumeReset(store: Store, token: string, hash: string): Promise<string | null> {
  return store.transaction(async (exec) => {
    const now = Date.now();
    const rows = await exec<Row>('delete from identity_password_resets where token_hash = ? and expires_at > ? returning person_id', [sha256(token), now]);
    if (!rows[0]) return null;
    const personId = String(rows[0].person_id);
    await exec('update identity_persons set password_hash = ?, updated_at = ? where id = ?', [hash, now, personId]);
    await exec('delete from identity_sessions where person_id = ?', [personId]);
    return personId;
  });
}
