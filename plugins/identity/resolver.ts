import { GatewayError, type Caller, type IdentityService, type Principal } from '../../kernel/index.js';
import { keyPrefix, sessionPrefix, sha256 } from './secrets.js';
import type { Role, SnapKey, SnapMembership, SnapPerson, SnapSession, Snapshot } from './snapshot.js';

type Headers = Record<string, string | string[] | undefined>;

export const sessionCookie = 'svc_session';
export const workspaceHeader = 'x-svc-workspace';

/** One refusal for every bad credential, so a caller learns nothing about which check failed. */
const refused = (): GatewayError =>
  new GatewayError('invalid_api_key', 'The API key or session is wrong, revoked or expired, or its owner is suspended or no longer in the workspace.');

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The value of one cookie from a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

interface Credential {
  token: string;
  from: 'bearer' | 'cookie';
}

/**
 * `Bearer <token>` as every client sends it (one space, printable ASCII): the token, found
 * without the regular expression's match list; anything else is left to it.
 */
function plainBearer(auth: string): string | undefined {
  if (auth.length < 8 || auth.charCodeAt(6) !== 32) return undefined;
  const word = 'bearer';
  for (let i = 0; i < 6; i++) if ((auth.charCodeAt(i) | 0x20) !== word.charCodeAt(i)) return undefined;
  for (let i = 7; i < auth.length; i++) {
    const c = auth.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return undefined;
  }
  return auth.slice(7);
}

/** The credential a request carries, and where from: a bearer token wins over the session cookie. */
export function credentialOf(headers: Headers): Credential | undefined {
  const auth = first(headers.authorization);
  if (auth !== undefined) {
    const plain = plainBearer(auth);
    if (plain !== undefined) return { token: plain, from: 'bearer' };
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return { token: m ? m[1]! : '', from: 'bearer' };
  }
  const cookie = readCookie(first(headers.cookie), sessionCookie);
  return cookie === undefined ? undefined : { token: cookie, from: 'cookie' };
}

type Resolved =
  | { via: 'key'; person: SnapPerson; key: SnapKey; membership: SnapMembership }
  | { via: 'session'; person: SnapPerson; session: SnapSession };

/**
 * The IdentityService over the in-memory snapshot: no database round trip per request. Every
 * key use is noted for the batched last_used_at write.
 */
export class Resolver implements IdentityService {
  constructor(
    private readonly snapshot: () => Snapshot,
    private readonly touch: (keyId: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate(headers: Headers): Principal {
    const credential = credentialOf(headers);
    if (credential === undefined) throw new GatewayError('invalid_api_key', 'Send an API key: Authorization: Bearer <API key>.');
    const r = this.resolve(credential);
    if (r.via === 'key') {
      return { personId: r.person.id, workspaceId: r.key.workspaceId, keyId: r.key.id, workspaceRole: r.membership.role, instanceAdmin: r.person.instanceAdmin, via: 'key' };
    }
    const m = this.selectWorkspace(r.person.id, first(headers[workspaceHeader]));
    return { personId: r.person.id, workspaceId: m.workspaceId, keyId: null, workspaceRole: m.role, instanceAdmin: r.person.instanceAdmin, via: 'session' };
  }

  /**
   * A stale session cookie counts as no credential here, so that a browser holding one can still
   * reach the public routes (sign in, password reset); a bad bearer token is refused outright.
   */
  caller(headers: Headers): Caller | null {
    const credential = credentialOf(headers);
    if (credential === undefined) return null;
    let r: Resolved;
    try {
      r = this.resolve(credential);
    } catch (err) {
      if (credential.from === 'cookie') return null;
      throw err;
    }
    if (r.via === 'key') {
      return { personId: r.person.id, instanceAdmin: r.person.instanceAdmin, via: 'key', keyId: r.key.id, keyWorkspaceId: r.key.workspaceId, sessionId: null };
    }
    return { personId: r.person.id, instanceAdmin: r.person.instanceAdmin, via: 'session', keyId: null, keyWorkspaceId: null, sessionId: r.session.id };
  }

  key(keyId: string): { workspaceId: string; personId: string } | undefined {
    const k = this.snapshot().keysById.get(keyId);
    return k ? { workspaceId: k.workspaceId, personId: k.personId } : undefined;
  }

  roleIn(personId: string, workspaceId: string): Role | null {
    const m = this.snapshot().memberships.get(personId)?.get(workspaceId);
    return m && m.status === 'active' ? m.role : null;
  }

  /** Active person plus a usable key (active member of its workspace) or unexpired session. */
  private resolve({ token, from }: Credential): Resolved {
    const snap = this.snapshot();
    if (token.startsWith(sessionPrefix)) {
      const session = snap.sessionsByHash.get(sha256(token));
      if (!session || session.expiresAt <= this.now()) throw refused();
      return { via: 'session', person: this.activePerson(session.personId), session };
    }
    // The cookie is for sessions only; a key is always sent as a bearer token.
    if (!token.startsWith(keyPrefix) || from === 'cookie') throw refused();
    const key = snap.keysByHash.get(sha256(token));
    if (!key) throw refused();
    const person = this.activePerson(key.personId);
    const membership = snap.memberships.get(key.personId)?.get(key.workspaceId);
    if (!membership || membership.status !== 'active') throw refused();
    this.touch(key.id);
    return { via: 'key', person, key, membership };
  }

  private activePerson(id: string): SnapPerson {
    const person = this.snapshot().persons.get(id);
    if (!person || person.status !== 'active') throw refused();
    return person;
  }

  /**
   * SPEC.md Authentication 4: a person in several workspaces names one with x-svc-workspace; with
   * exactly one active membership it is the default.
   */
  private selectWorkspace(personId: string, wanted: string | undefined): SnapMembership {
    const active = [...(this.snapshot().memberships.get(personId)?.values() ?? [])].filter((m) => m.status === 'active');
    if (wanted !== undefined && wanted !== '') {
      const m = active.find((a) => a.workspaceId === wanted);
      if (!m) throw new GatewayError('not_found', 'No such workspace, or not yours.', { param: workspaceHeader });
      return m;
    }
    if (active.length === 1) return active[0]!;
    if (active.length === 0) throw new GatewayError('not_found', 'You are not an active member of any workspace.', { param: workspaceHeader });
    throw new GatewayError('invalid_request', `You are a member of several workspaces: name one with the ${workspaceHeader} header.`, { param: workspaceHeader });
  }
}
