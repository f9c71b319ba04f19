import { Type, type Static } from '../../kernel/index.js';

/** Response shapes of the identity endpoints; times are ISO 8601 strings, secrets never appear. */
const Time = Type.String({ description: 'ISO 8601 time' });
const MaybeTime = Type.Union([Type.String(), Type.Null()]);
const RoleOrNull = Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Null()]);
export const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('member')]);
export const StatusSchema = Type.Union([Type.Literal('active'), Type.Literal('suspended')]);

export const PersonView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  instance_admin: Type.Boolean(),
  status: StatusSchema,
  /** False until the person sets one through a reset link. */
  password_set: Type.Boolean(),
  created_at: Time,
});

export const WorkspaceView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Time,
  /** The caller's role in it; null for an instance admin who is not a member. */
  role: RoleOrNull,
});

export const MemberView = Type.Object({
  person_id: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  role: RoleSchema,
  status: StatusSchema,
  created_at: Time,
});

export const KeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** `svc_` and the next four characters: enough to recognise a key, useless to use one. */
  prefix: Type.String(),
  workspace_id: Type.String(),
  person_id: Type.String(),
  created_at: Time,
  last_used_at: MaybeTime,
  revoked_at: MaybeTime,
});

export const CreatedKeyView = Type.Composite([KeyView, Type.Object({ key: Type.String({ description: 'The key value, shown only in this response' }) })]);

export const MeView = Type.Object({
  person: PersonView,
  via: Type.Union([Type.Literal('session'), Type.Literal('key')]),
  /** For a key: its workspace; for a session: null (choose one per request with x-svc-workspace). */
  workspace: Type.Union([WorkspaceView, Type.Null()]),
  /** Workspaces the caller is an active member of (for a key, only its own). */
  workspaces: Type.Array(WorkspaceView),
});

export const SessionCreatedView = Type.Object({
  /** The session token, shown only in this response (also set as the svc_session cookie). */
  token: Type.String(),
  expires_at: Time,
  person: PersonView,
});

export const ResetCreatedView = Type.Object({
  /** One-time token for POST /admin/v1/password-reset; shown only in this response. */
  token: Type.String(),
  person_id: Type.String(),
  expires_at: Time,
});

export const List = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Object({ data: Type.Array(item) });
export const Empty = Type.Null();

export type PersonViewT = Static<typeof PersonView>;
export type WorkspaceViewT = Static<typeof WorkspaceView>;
export type MemberViewT = Static<typeof MemberView>;
export type KeyViewT = Static<typeof KeyView>;

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
