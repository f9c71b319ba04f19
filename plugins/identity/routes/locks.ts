import { GatewayError, Type } from '../../../kernel/index.js';
import { audit, signedIn, type Deps } from '../deps.js';
import { Empty, iso } from '../views.js';
import type { LockRecord } from '../throttle.js';

const tag = 'identity';

const LockView = Type.Object({
  id: Type.String(),
  action: Type.Union([Type.Literal('sign_in'), Type.Literal('password_reset')], { description: 'What was guessed at: passwords, or reset links' }),
  scope: Type.Union([Type.Literal('account'), Type.Literal('address')]),
  subject: Type.String({ description: 'The e-mail tried (lower case) or the client address (an IPv6 /64)' }),
  person_id: Type.Union([Type.String(), Type.Null()], { description: 'The account’s person, when the e-mail is known' }),
  failures: Type.Integer({ description: 'Failed attempts counted when it was locked' }),
  locked_at: Type.String({ description: 'ISO 8601' }),
  locked_until: Type.String({ description: 'ISO 8601; the lock lifts itself then' }),
});

const view = (l: LockRecord) => ({
  id: l.id, action: l.action, scope: l.scope, subject: l.subject, person_id: l.person_id, failures: l.failures, locked_at: iso(l.locked_at), locked_until: iso(l.until),
});

/** Instance admins see the sign-in and reset locks in force (on every replica) and lift them. */
export function lockRoutes(d: Deps): void {
  const { admin, throttle, log } = d;

  admin.route({
    method: 'GET',
    path: '/sign-in-locks',
    summary: 'Accounts and client addresses locked after failed sign-ins or password resets',
    tag,
    access: 'instance-admin',
    response: Type.Object({ data: Type.Array(LockView) }),
    handler: async () => ({ data: (await throttle.locks()).map(view) }),
  });

  admin.route({
    method: 'DELETE',
    path: '/sign-in-locks/:lockId',
    summary: 'Lift a lock: the account or address may try again at once, its failures forgotten',
    tag,
    access: 'instance-admin',
    status: 204,
    audit: { action: 'sign_in_lock.delete' },
    response: Empty,
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const lifted = await throttle.unlock(params.lockId ?? '');
      if (!lifted) throw new GatewayError('not_found', 'No such lock: it is unknown, already lifted or over.', { param: 'lockId' });
      audit(log, 'sign_in_unlocked', c.personId, lifted.id);
      return null;
    },
  });
}
