import type { Store } from '../../../kernel/index.js';
import { insertPerson, isUniqueViolation, personByEmail, personById, updatePerson, type PersonRecord } from '../db-persons.js';
import { claimHolds, type SignedInClaims } from './client.js';
import { link, linkedPerson, type Issuer } from './issuers.js';

/** Why a sign-in through an issuer was refused; each has its own sentence on the refusal page. */
export type Refusal = 'no_email' | 'email_unverified' | 'domain_not_allowed' | 'unknown_person' | 'suspended';

export const refusalText: Record<Refusal | 'failed' | 'expired', string> = {
  no_email: 'The identity provider did not tell svc your e-mail address.',
  email_unverified: 'The identity provider has not verified your e-mail address.',
  domain_not_allowed: 'Your e-mail domain may not sign in here.',
  unknown_person: 'There is no account for your e-mail address here. Ask an instance admin to add you.',
  suspended: 'Your account is suspended. Ask an instance admin.',
  failed: 'The sign-in could not be verified. Start again from the sign-in page.',
  expired: 'This sign-in is unknown or took too long. Start again from the sign-in page.',
};

export type Decision = { person: PersonRecord; created: boolean; adminChanged: boolean } | { refused: Refusal; personId: string | null };

/**
 * Who signs in, under the issuer's policy: a subject linked before is that person; otherwise the
 * person with the (verified) e-mail, or a new one when the issuer creates persons. The e-mail's
 * domain must be allowed; a suspended person is refused. With an admin claim configured, the
 * instance-admin flag follows the claim at every sign-in (the issuer is the source of truth),
 * except that the last active instance admin is never demoted this way.
 */
export async function decide(store: Store, issuer: Issuer, c: SignedInClaims): Promise<Decision> {
  const linked = await linkedPerson(store, issuer.id, c.subject);
  let person = linked ? await personById(store, linked) : null;
  if (!person) {
    if (!c.email) return { refused: 'no_email', personId: null };
    if (c.emailVerified === false) return { refused: 'email_unverified', personId: null };
  }
  const email = person?.email ?? c.email!;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (issuer.allowedDomains.length > 0 && !issuer.allowedDomains.includes(domain)) return { refused: 'domain_not_allowed', personId: person?.id ?? null };
  let created = false;
  person ??= await personByEmail(store, email);
  if (!person) {
    if (!issuer.createPersons) return { refused: 'unknown_person', personId: null };
    try {
      person = await insertPerson(store, { email, name: c.name, passwordHash: null, instanceAdmin: false });
      created = true;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      person = (await personByEmail(store, email))!;
    }
  }
  if (person.status !== 'active') return { refused: 'suspended', personId: person.id };
  if (!linked) await link(store, issuer.id, c.subject, person.id);
  let adminChanged = false;
  if (issuer.adminClaim) {
    const admin = claimHolds(c.raw, issuer.adminClaim, issuer.adminValue ?? 'true');
    if (admin !== person.instanceAdmin && (admin || (await otherAdmins(store, person.id)))) {
      await updatePerson(store, person.id, { instanceAdmin: admin });
      person = { ...person, instanceAdmin: admin };
      adminChanged = true;
    }
  }
  return { person, created, adminChanged };
}

async function otherAdmins(store: Store, personId: string): Promise<boolean> {
  const rows = await store.execute("select id from identity_persons where instance_admin = 1 and status = 'active' and id <> ? limit 1", [personId]);
  return rows.length > 0;
}
