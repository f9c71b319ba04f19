import type { Store } from '../../kernel/index.js';
import { newId, sha256, visiblePrefix } from './secrets.js';
import { num, numOrNull, type Role, type Status } from './snapshot.js';
import { iso, isoOrNull, type KeyViewT, type MemberViewT, type WorkspaceViewT } from './views.js';

type Row = Record<string, unknown>;
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function workspaceView(r: Row, role: Role | null): WorkspaceViewT {
  return { id: String(r.id), name: String(r.name), created_at: iso(num(r.created_at)), role };
}

/** Creates a workspace with its creator as its first admin. */
export async function insertWorkspace(store: Store, name: string, creatorId: string): Promise<WorkspaceViewT> {
  const id = newId('ws');
  const now = Date.now();
  await store.transaction(async (exec) => {
    await exec('insert into identity_workspaces (id, name, created_by, created_at, updated_at) values (?, ?, ?, ?, ?)', [id, name, creatorId, now, now]);
    await exec("insert into identity_memberships (workspace_id, person_id, role, status, created_at) values (?, ?, 'admin', 'active', ?)", [id, creatorId, now]);
  });
  return { id, name, created_at: iso(now), role: 'admin' };
}

/** The id of the workspace with this name, ignoring case (names are unique on the instance), or null. */
export async function workspaceNamed(store: Store, name: string): Promise<string | null> {
  const rows = await store.execute<Row>('select id from identity_workspaces where lower(name) = lower(?)', [name]);
  return rows[0] ? String(rows[0].id) : null;
}

export async function workspaceById(store: Store, id: string, role: Role | null): Promise<WorkspaceViewT | null> {
  const rows = await store.execute<Row>('select id, name, created_at from identity_workspaces where id = ?', [id]);
  return rows[0] ? workspaceView(rows[0], role) : null;
}

export async function renameWorkspace(store: Store, id: string, name: string): Promise<void> {
  await store.execute('update identity_workspaces set name = ?, updated_at = ? where id = ?', [name, Date.now(), id]);
}

/** Workspaces the person is an active member of, with their role. */
export async function workspacesOf(store: Store, personId: string): Promise<WorkspaceViewT[]> {
  const rows = await store.execute<Row>(
    "select w.id, w.name, w.created_at, m.role from identity_workspaces w join identity_memberships m on m.workspace_id = w.id where m.person_id = ? and m.status = 'active' order by w.created_at, w.id",
    [personId],
  );
  return rows.map((r) => workspaceView(r, r.role as Role));
}

/** Every workspace, with the caller's role where they have one (instance admins). */
export async function allWorkspaces(store: Store, personId: string): Promise<WorkspaceViewT[]> {
  const rows = await store.execute<Row>(
    "select w.id, w.name, w.created_at, m.role from identity_workspaces w left join identity_memberships m on m.workspace_id = w.id and m.person_id = ? and m.status = 'active' order by w.created_at, w.id",
    [personId],
  );
  return rows.map((r) => workspaceView(r, (str(r.role) as Role | null) ?? null));
}

const memberSelect =
  'select m.person_id, p.email, p.name, m.role, m.status, m.created_at from identity_memberships m join identity_persons p on p.id = m.person_id where m.workspace_id = ?';

function memberView(r: Row): MemberViewT {
  return { person_id: String(r.person_id), email: String(r.email), name: str(r.name), role: r.role as Role, status: r.status as Status, created_at: iso(num(r.created_at)) };
}

export async function listMembers(store: Store, workspaceId: string): Promise<MemberViewT[]> {
  return (await store.execute<Row>(`${memberSelect} order by m.created_at, m.person_id`, [workspaceId])).map(memberView);
}

export async function memberOf(store: Store, workspaceId: string, personId: string): Promise<MemberViewT | null> {
  const rows = await store.execute<Row>(`${memberSelect} and m.person_id = ?`, [workspaceId, personId]);
  return rows[0] ? memberView(rows[0]) : null;
}

/** Adds a member; throws a unique violation when the person already is one. */
export async function insertMember(store: Store, workspaceId: string, personId: string, role: Role): Promise<void> {
  await store.execute("insert into identity_memberships (workspace_id, person_id, role, status, created_at) values (?, ?, ?, 'active', ?)", [workspaceId, personId, role, Date.now()]);
}

export async function updateMember(store: Store, workspaceId: string, personId: string, change: { role?: Role; status?: Status }): Promise<void> {
  await store.transaction(async (exec) => {
    if (change.role !== undefined) await exec('update identity_memberships set role = ? where workspace_id = ? and person_id = ?', [change.role, workspaceId, personId]);
    if (change.status !== undefined) await exec('update identity_memberships set status = ? where workspace_id = ? and person_id = ?', [change.status, workspaceId, personId]);
  });
}

/** Removes a member and revokes their keys there, so that adding them back does not revive old keys. */
export async function deleteMember(store: Store, workspaceId: string, personId: string): Promise<void> {
  await store.transaction(async (exec) => {
    await exec('delete from identity_memberships where workspace_id = ? and person_id = ?', [workspaceId, personId]);
    await exec('update identity_api_keys set revoked_at = ? where workspace_id = ? and person_id = ? and revoked_at is null', [Date.now(), workspaceId, personId]);
  });
}

export async function activeAdminCount(store: Store, workspaceId: string): Promise<number> {
  const rows = await store.execute<Row>("select count(*) as n from identity_memberships where workspace_id = ? and role = 'admin' and status = 'active'", [workspaceId]);
  return num(rows[0]?.n ?? 0);
}

type KeyRecord = KeyViewT;

const keyColumns = 'id, name, prefix, workspace_id, person_id, created_at, last_used_at, revoked_at';

/** A key row as lists show it; `unflushed` overlays a use this replica has not written yet. */
function keyView(r: Row, unflushed: (id: string) => number | undefined): KeyRecord {
  const stored = numOrNull(r.last_used_at);
  const pending = unflushed(String(r.id));
  const lastUsed = pending !== undefined && (stored === null || pending > stored) ? pending : stored;
  return {
    id: String(r.id),
    name: String(r.name),
    prefix: String(r.prefix),
    workspace_id: String(r.workspace_id),
    person_id: String(r.person_id),
    created_at: iso(num(r.created_at)),
    last_used_at: isoOrNull(lastUsed),
    revoked_at: isoOrNull(numOrNull(r.revoked_at)),
  };
}

/** Stores a key by its hash and visible prefix; the value itself is returned to the creator only. */
export async function insertKey(store: Store, workspaceId: string, personId: string, name: string, key: string): Promise<KeyRecord> {
  const id = newId('key');
  const now = Date.now();
  await store.execute(
    'insert into identity_api_keys (id, workspace_id, person_id, name, key_hash, prefix, created_at) values (?, ?, ?, ?, ?, ?, ?)',
    [id, workspaceId, personId, name, sha256(key), visiblePrefix(key), now],
  );
  return { id, name, prefix: visiblePrefix(key), workspace_id: workspaceId, person_id: personId, created_at: iso(now), last_used_at: null, revoked_at: null };
}

/** Keys of a workspace: all of them, or only `personId`'s. */
export async function listKeys(store: Store, workspaceId: string, personId: string | null, unflushed: (id: string) => number | undefined): Promise<KeyRecord[]> {
  const rows = personId === null
    ? await store.execute<Row>(`select ${keyColumns} from identity_api_keys where workspace_id = ? order by created_at, id`, [workspaceId])
    : await store.execute<Row>(`select ${keyColumns} from identity_api_keys where workspace_id = ? and person_id = ? order by created_at, id`, [workspaceId, personId]);
  return rows.map((r) => keyView(r, unflushed));
}

export async function keyIn(store: Store, workspaceId: string, keyId: string): Promise<KeyRecord | null> {
  const rows = await store.execute<Row>(`select ${keyColumns} from identity_api_keys where workspace_id = ? and id = ?`, [workspaceId, keyId]);
  return rows[0] ? keyView(rows[0], () => undefined) : null;
}

/** True when the person has an active (unrevoked) key with this name in the workspace, ignoring case. */
export async function activeKeyNamed(store: Store, workspaceId: string, personId: string, name: string): Promise<boolean> {
  const rows = await store.execute<Row>(
    'select id from identity_api_keys where workspace_id = ? and person_id = ? and lower(name) = lower(?) and revoked_at is null',
    [workspaceId, personId, name],
  );
  return rows.length > 0;
}

export async function revokeKey(store: Store, keyId: string): Promise<void> {
  await store.execute('update identity_api_keys set revoked_at = ? where id = ? and revoked_at is null', [Date.now(), keyId]);
}
