import type { Store } from '../../kernel/index.js';

export type Role = 'admin' | 'member';
export type Status = 'active' | 'suspended';

export interface SnapPerson {
  id: string;
  instanceAdmin: boolean;
  status: Status;
}

export interface SnapMembership {
  workspaceId: string;
  role: Role;
  status: Status;
}

export interface SnapKey {
  id: string;
  workspaceId: string;
  personId: string;
  /** The visible part (`svc_` and four characters) that key lists show; safe to log. */
  prefix: string;
}

export interface SnapSession {
  id: string;
  personId: string;
  expiresAt: number;
}

/**
 * Everything the request path needs to recognise a caller, held in memory so that no model
 * request waits on the database. Only usable credentials are in it: revoked keys and expired
 * sessions are left out, so a lookup miss is the refusal.
 */
export interface Snapshot {
  persons: Map<string, SnapPerson>;
  /** person id → workspace id → membership. */
  memberships: Map<string, Map<string, SnapMembership>>;
  keysByHash: Map<string, SnapKey>;
  keysById: Map<string, SnapKey>;
  sessionsByHash: Map<string, SnapSession>;
  loadedAt: number;
}

/** Cache channel of identity change messages between replicas. */
export const changeChannel = 'identity.changed';

export const emptySnapshot = (): Snapshot => ({ persons: new Map(), memberships: new Map(), keysByHash: new Map(), keysById: new Map(), sessionsByHash: new Map(), loadedAt: 0 });

type Row = Record<string, unknown>;

/** PostgreSQL returns bigint columns as strings; SQLite as numbers. */
export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Reads the whole snapshot; four small queries, no joins, so both dialects run the same SQL. */
export async function loadSnapshot(store: Store, now: number): Promise<Snapshot> {
  const [persons, memberships, keys, sessions] = await Promise.all([
    store.execute<Row>('select id, instance_admin, status from identity_persons'),
    store.execute<Row>('select workspace_id, person_id, role, status from identity_memberships'),
    store.execute<Row>('select id, workspace_id, person_id, key_hash, prefix from identity_api_keys where revoked_at is null'),
    store.execute<Row>('select id, person_id, token_hash, expires_at from identity_sessions where expires_at > ?', [now]),
  ]);
  const snap = emptySnapshot();
  snap.loadedAt = now;
  for (const r of persons) {
    snap.persons.set(String(r.id), { id: String(r.id), instanceAdmin: num(r.instance_admin) === 1, status: r.status as Status });
  }
  for (const r of memberships) {
    const pid = String(r.person_id);
    let mine = snap.memberships.get(pid);
    if (!mine) snap.memberships.set(pid, (mine = new Map()));
    mine.set(String(r.workspace_id), { workspaceId: String(r.workspace_id), role: r.role as Role, status: r.status as Status });
  }
  for (const r of keys) {
    const key = { id: String(r.id), workspaceId: String(r.workspace_id), personId: String(r.person_id), prefix: String(r.prefix) };
    snap.keysByHash.set(String(r.key_hash), key);
    snap.keysById.set(key.id, key);
  }
  for (const r of sessions) {
    snap.sessionsByHash.set(String(r.token_hash), { id: String(r.id), personId: String(r.person_id), expiresAt: num(r.expires_at) });
  }
  return snap;
}
