import { GatewayError, Type } from '../../../kernel/index.js';
import { audit, checkPassword, requireSession, signedIn, type Deps } from '../deps.js';
import { consumeReset, deleteSession, insertSession, personById, personByEmail, personView, setPassword } from '../db-persons.js';
import { workspaceById, workspacesOf } from '../db-workspaces.js';
import { hashPassword, newSecret, sessionPrefix, verifyPassword } from '../secrets.js';
import { sessionCookie } from '../resolver.js';
import { Empty, MeView, SessionCreatedView, iso } from '../views.js';
import { accountSubject, addressSubject } from '../throttle.js';
import { passwordSignInOn } from '../oidc/issuers.js';

const tag = 'identity';

/**
 * `Set-Cookie` for the UI: HttpOnly so scripts cannot read it, Strict so no other site's page or
 * link sends it (the admin API also wants x-svc-csrf on cookie-signed changes: plugins/admin-api).
 */
export function sessionCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${sessionCookie}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Sign-in, sign-out, the caller's own profile and password, and password-reset links. */
export function sessionRoutes(d: Deps): void {
  const { admin, store, sync, config, log, throttle } = d;
  /** `Secure` whenever the browser reached svc over HTTPS (or the config says always). */
  const secure = (rc: { secure: boolean }) => config.secureCookie || rc.secure;

  admin.route({
    method: 'POST',
    path: '/sessions',
    summary: 'Sign in with email and password; returns the session token once and sets the svc_session cookie',
    tag,
    access: 'public',
    status: 201,
    audit: { action: 'session.sign_in', attempts: true },
    body: Type.Object({ email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) }),
    response: SessionCreatedView,
    handler: async ({ body, rc, note }) => {
      if (!(await passwordSignInOn(store))) throw new GatewayError('forbidden', 'Password sign-in is turned off here: sign in with your identity provider.');
      // Counted before the password is checked: a locked account or address costs no scrypt.
      const attempt = await throttle.enter('sign_in', [accountSubject(body.email), addressSubject(rc.clientAddress)], rc.clientAddress);
      const person = await personByEmail(store, body.email);
      const ok = await verifyPassword(body.password, person?.passwordHash ?? null);
      note({ actor_id: person?.id ?? null, resource_id: person?.id ?? null });
      if (!person || !ok || person.status !== 'active') {
        const reason = !person ? 'unknown_email' : !ok ? 'wrong_password' : 'suspended';
        log.info('identity.sign_in_failed', { person_id: person?.id ?? null, reason });
        // A suspended person's right password is no failed guess.
        if (!ok || !person) await attempt.failed(person?.id ?? null);
        else await attempt.succeeded();
        throw new GatewayError('invalid_api_key', 'The email or password is wrong.');
      }
      await attempt.succeeded();
      const token = newSecret(sessionPrefix);
      const session = await insertSession(store, person.id, token, config.sessionTtlSeconds * 1000);
      await sync.changed();
      audit(log, 'signed_in', person.id, session.id);
      rc.res.setHeader('set-cookie', sessionCookieHeader(token, config.sessionTtlSeconds, secure(rc)));
      return { token, expires_at: iso(session.expiresAt), person: personView(person) };
    },
  });

  admin.route({
    method: 'DELETE',
    path: '/sessions/current',
    summary: 'Sign out: end the session used for this request and clear the cookie',
    tag,
    access: 'person',
    status: 204,
    audit: { action: 'session.sign_out' },
    response: Empty,
    handler: async ({ caller, rc }) => {
      const c = signedIn(caller);
      const sessionId = requireSession(c, 'Signing out');
      await deleteSession(store, sessionId);
      await sync.changed();
      audit(log, 'signed_out', c.personId, sessionId);
      rc.res.setHeader('set-cookie', sessionCookieHeader('', 0, secure(rc)));
      return null;
    },
  });

  admin.route({
    method: 'GET',
    path: '/me',
    summary: 'The signed-in person (or the key’s creator) and their workspaces; for a key, its workspace',
    tag,
    access: 'person',
    response: MeView,
    handler: async ({ caller }) => {
      const c = signedIn(caller);
      const person = await personById(store, c.personId);
      if (!person) throw new GatewayError('invalid_api_key', 'Sign in first.');
      if (c.keyWorkspaceId !== null) {
        const ws = await workspaceById(store, c.keyWorkspaceId, d.resolver.roleIn(c.personId, c.keyWorkspaceId));
        return { person: personView(person), via: 'key' as const, workspace: ws, workspaces: ws ? [ws] : [] };
      }
      return { person: personView(person), via: 'session' as const, workspace: null, workspaces: await workspacesOf(store, c.personId) };
    },
  });

  admin.route({
    method: 'POST',
    path: '/me/password',
    summary: 'Change the own password (needs the current one); ends every other session',
    tag,
    access: 'person',
    status: 204,
    audit: { action: 'password.change', attempts: true },
    body: Type.Object({ current_password: Type.String({ maxLength: 1024 }), new_password: Type.String() }),
    response: Empty,
    handler: async ({ caller, body, rc }) => {
      const c = signedIn(caller);
      const sessionId = requireSession(c, 'Changing the password');
      const person = await personById(store, c.personId);
      if (!person) throw new GatewayError('invalid_api_key', 'Sign in first.');
      // A stolen session must not become a way to guess the password: same counts as sign-in.
      const attempt = await throttle.enter('sign_in', [accountSubject(person.email)], rc.clientAddress);
      if (!(await verifyPassword(body.current_password, person.passwordHash))) {
        await attempt.failed(person.id);
        throw new GatewayError('invalid_request', 'The current password is wrong.', { param: 'current_password' });
      }
      await attempt.succeeded();
      checkPassword(body.new_password, config.minPasswordLength, 'new_password');
      await setPassword(store, c.personId, await hashPassword(body.new_password), sessionId);
      await sync.changed();
      audit(log, 'password_changed', c.personId, c.personId);
      return null;
    },
  });

  admin.route({
    method: 'POST',
    path: '/password-reset',
    summary: 'Set a new password with a one-time reset link token; ends every session of the person',
    tag,
    access: 'public',
    status: 204,
    audit: { action: 'password.reset', attempts: true },
    body: Type.Object({ token: Type.String({ maxLength: 200 }), password: Type.String() }),
    response: Empty,
    handler: async ({ body, rc, note }) => {
      checkPassword(body.password, config.minPasswordLength);
      // A reset token names no account until it is valid, so guesses are counted per address.
      const attempt = await throttle.enter('password_reset', [addressSubject(rc.clientAddress)], rc.clientAddress);
      const personId = await consumeReset(store, body.token, await hashPassword(body.password));
      if (personId === null) {
        await attempt.failed(null);
        throw new GatewayError('invalid_request', 'The reset link is unknown, already used or expired.', { param: 'token' });
      }
      await attempt.succeeded();
      note({ actor_id: personId, resource_id: personId });
      await sync.changed();
      audit(log, 'password_reset_used', personId, personId);
      return null;
    },
  });
}
