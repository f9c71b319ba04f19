import { GatewayError, Type, type Store } from '../../../kernel/index.js';
import { audit, checkEmail, checkName, checkPassword, signedIn, type Deps } from '../deps.js';
import { deletePerson, insertPerson, insertReset, soleAdminOf, isUniqueViolation, listPersons, personByEmail, personById, personView, updatePerson, type PersonRecord } from '../db-persons.js';
import { hashPassword, newSecret, resetPrefix } from '../secrets.js';
import { Empty, List, PersonView, ResetCreatedView, StatusSchema, iso } from '../views.js';

const tag = 'persons';

/** The person named in the path, or 404 not_found. */
async function existing(store: Store, id: string | undefined): Promise<PersonRecord> {
  const person = id ? await personById(store, id) : null;
  if (!person) throw new GatewayError('not_found', 'No such person.', { param: 'personId' });
  return person;
}

const taken = (): GatewayError => new GatewayError('invalid_request', 'A person with that email already exists.', { param: 'email' });

/** Instance admins manage persons: list, create, suspend and reinstate, reset links. */
export function personRoutes(d: Deps): void {
  const { admin, store, sync, config, log } = d;

  admin.route({
    method: 'GET',
    path: '/persons',
    summary: 'List every person of the instance',
    tag,
    access: 'instance-admin',
    response: List(PersonView),
    handler: async () => ({ data: (await listPersons(store)).map(personView) }),
  });

  admin.route({
    method: 'POST',
    path: '/persons',
    summary: 'Create a person; without a password, give them a reset link to set one',
    tag,
    access: 'instance-admin',
    status: 201,
    body: Type.Object({
      email: Type.String({ maxLength: 320 }),
      name: Type.Optional(Type.String()),
      password: Type.Optional(Type.String()),
      instance_admin: Type.Optional(Type.Boolean()),
    }),
    response: PersonView,
    handler: async ({ caller, body }) => {
      const email = checkEmail(body.email);
      const name = body.name === undefined ? null : checkName(body.name);
      if (body.password !== undefined) checkPassword(body.password, config.minPasswordLength);
      if (await personByEmail(store, email)) throw taken();
      const passwordHash = body.password === undefined ? null : await hashPassword(body.password);
      const person = await insertPerson(store, { email, name, passwordHash, instanceAdmin: body.instance_admin ?? false }).catch((err: unknown) => {
        throw isUniqueViolation(err) ? taken() : err;
      });
      await sync.changed();
      audit(log, 'person_created', signedIn(caller).personId, person.id);
      return personView(person);
    },
  });

  admin.route({
    method: 'GET',
    path: '/persons/:personId',
    summary: 'One person',
    tag,
    access: 'instance-admin',
    response: PersonView,
    handler: async ({ params }) => personView(await existing(store, params.personId)),
  });

  admin.route({
    method: 'PATCH',
    path: '/persons/:personId',
    summary: 'Suspend or reinstate a person instance-wide (status), rename, or set the instance-admin flag',
    tag,
    access: 'instance-admin',
    body: Type.Object({
      status: Type.Optional(StatusSchema),
      name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      instance_admin: Type.Optional(Type.Boolean()),
    }),
    response: PersonView,
    handler: async ({ caller, params, body }) => {
      const c = signedIn(caller);
      const person = await existing(store, params.personId);
      if (person.id === c.personId && body.status === 'suspended') {
        throw new GatewayError('invalid_request', 'You cannot suspend yourself.', { param: 'status' });
      }
      if (person.id === c.personId && body.instance_admin === false) {
        throw new GatewayError('invalid_request', 'You cannot remove your own instance-admin role.', { param: 'instance_admin' });
      }
      const name = body.name === undefined || body.name === null ? body.name : checkName(body.name);
      await updatePerson(store, person.id, { status: body.status, name, instanceAdmin: body.instance_admin });
      await sync.changed();
      audit(log, 'person_updated', c.personId, person.id);
      return personView(await existing(store, person.id));
    },
  });

  admin.route({
    method: 'DELETE',
    path: '/persons/:personId',
    summary: 'Remove a person for good: their memberships, keys and sessions end at once (not yourself, not a workspace’s only admin)',
    tag,
    access: 'instance-admin',
    status: 204,
    response: Empty,
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const person = await existing(store, params.personId);
      if (person.id === c.personId) throw new GatewayError('invalid_request', 'You cannot remove yourself.', { param: 'personId' });
      const sole = await soleAdminOf(store, person.id);
      if (sole.length > 0) {
        throw new GatewayError('invalid_request', `${person.email} is the only admin of ${sole.map((n) => `“${n}”`).join(', ')}; make someone else its admin first.`, { param: 'personId' });
      }
      await deletePerson(store, person.id);
      await sync.changed();
      audit(log, 'person_deleted', c.personId, person.id);
      return null;
    },
  });

  admin.route({
    method: 'POST',
    path: '/persons/:personId/password-reset',
    summary: 'Create a one-time password-reset link token for a person (replaces earlier ones)',
    tag,
    access: 'instance-admin',
    status: 201,
    response: ResetCreatedView,
    handler: async ({ caller, params }) => {
      const c = signedIn(caller);
      const person = await existing(store, params.personId);
      const token = newSecret(resetPrefix);
      const reset = await insertReset(store, person.id, token, config.resetTtlSeconds * 1000, c.personId);
      audit(log, 'password_reset_created', c.personId, person.id);
      return { token, person_id: person.id, expires_at: iso(reset.expiresAt) };
    },
  });
}
