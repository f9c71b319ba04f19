import { GatewayError, type AdminApi, type Caller, type Logger, type SnapshotSync, type Store } from '../../kernel/index.js';
import type { IdentityAction, IdentityConfig } from './config.js';
import type { LastUsed } from './last-used.js';
import type { Resolver } from './resolver.js';
import type { Snapshot } from './snapshot.js';
import type { SignInThrottle } from './throttle.js';

/** What the identity routes share: the store, the snapshot sync, the resolver and the config. */
export interface Deps {
  store: Store;
  sync: SnapshotSync<Snapshot>;
  lastUsed: LastUsed;
  resolver: Resolver;
  config: IdentityConfig;
  log: Logger;
  admin: AdminApi;
  throttle: SignInThrottle;
}

/** Writes one audit line: ids only. */
export function audit(log: Logger, action: IdentityAction, actor: string | null, subject: string, workspaceId: string | null = null): void {
  log.info('identity.audit', { action, actor_id: actor, subject_id: subject, workspace_id: workspaceId });
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** 400 invalid_request naming `param` unless the email looks like one. */
export function checkEmail(email: string, param = 'email'): string {
  const e = email.trim().toLowerCase();
  if (e.length > 320 || !emailPattern.test(e)) throw new GatewayError('invalid_request', 'That is not a valid email address.', { param });
  return e;
}

/** 400 invalid_request naming `param` when the password is too short or absurdly long. */
export function checkPassword(password: string, min: number, param = 'password'): void {
  if (password.length < min) throw new GatewayError('invalid_request', `The password must be at least ${min} characters long.`, { param });
  if (password.length > 1024) throw new GatewayError('invalid_request', 'The password must be at most 1024 characters long.', { param });
}

/** A display name: trimmed, 1 to 200 characters. */
export function checkName(name: string, param = 'name'): string {
  const n = name.trim();
  if (n.length === 0 || n.length > 200) throw new GatewayError('invalid_request', 'The name must be 1 to 200 characters long.', { param });
  return n;
}

/** The caller, which the route's access rule already required. */
export function signedIn(caller: Caller | null): Caller {
  if (!caller) throw new GatewayError('invalid_api_key', 'Sign in first.');
  return caller;
}

/** Some actions need a person at the keyboard, not a key acting for them. */
export function requireSession(caller: Caller, what: string): string {
  if (caller.via !== 'session' || caller.sessionId === null) throw new GatewayError('forbidden', `${what} needs a signed-in person, not an API key.`);
  return caller.sessionId;
}

/** Instance admins signed in as a person act on every workspace. */
export const isInstanceAdmin = (caller: Caller): boolean => caller.instanceAdmin && caller.via === 'session';
