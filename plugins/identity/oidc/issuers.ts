import type { Store } from '../../../kernel/index.js';
import { newId } from '../secrets.js';
import { num } from '../snapshot.js';

type Row = Record<string, unknown>;

/** An OpenID Connect issuer as stored; `clientSecret` is the credential vault's ciphertext. */
export interface Issuer {
  id: string;
  name: string;
  discoveryUrl: string;
  clientId: string;
  clientSecret: string | null;
  allowedDomains: string[];
  /** The claim that makes a person an instance admin, and the value it must hold (or contain). */
  adminClaim: string | null;
  adminValue: string | null;
  createPersons: boolean;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export type IssuerFields = Omit<Issuer, 'id' | 'createdAt' | 'updatedAt'>;

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function toIssuer(r: Row): Issuer {
  return {
    id: String(r.id), name: String(r.name), discoveryUrl: String(r.discovery_url), clientId: String(r.client_id), clientSecret: str(r.client_secret),
    allowedDomains: JSON.parse(String(r.allowed_domains)) as string[], adminClaim: str(r.admin_claim), adminValue: str(r.admin_value),
    createPersons: num(r.create_persons) === 1, enabled: num(r.enabled) === 1, createdAt: num(r.created_at), updatedAt: num(r.updated_at),
  };
}

export async function listIssuers(store: Store): Promise<Issuer[]> {
  return (await store.execute<Row>('select * from identity_oidc_issuers order by created_at, id')).map(toIssuer);
}

export async function issuerById(store: Store, id: string): Promise<Issuer | null> {
  const [row] = await store.execute<Row>('select * from identity_oidc_issuers where id = ?', [id]);
  return row ? toIssuer(row) : null;
}

/** Inserts an issuer; `secret` encrypts the client secret for the new row's id (the vault binds it to the row). */
export async function insertIssuer(store: Store, f: Omit<IssuerFields, 'clientSecret'>, secret: (id: string) => string | null): Promise<Issuer> {
  const now = Date.now();
  const id = newId('oidc');
  const issuer: Issuer = { ...f, id, clientSecret: secret(id), createdAt: now, updatedAt: now };
  await store.execute(
    'insert into identity_oidc_issuers (id, name, discovery_url, client_id, client_secret, allowed_domains, admin_claim, admin_value, create_persons, enabled, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, f.name, f.discoveryUrl, f.clientId, issuer.clientSecret, JSON.stringify(f.allowedDomains), f.adminClaim, f.adminValue, f.createPersons ? 1 : 0, f.enabled ? 1 : 0, now, now],
  );
  return issuer;
}

export async function updateIssuer(store: Store, i: Issuer): Promise<void> {
  await store.execute(
    'update identity_oidc_issuers set name = ?, discovery_url = ?, client_id = ?, client_secret = ?, allowed_domains = ?, admin_claim = ?, admin_value = ?, create_persons = ?, enabled = ?, updated_at = ? where id = ?',
    [i.name, i.discoveryUrl, i.clientId, i.clientSecret, JSON.stringify(i.allowedDomains), i.adminClaim, i.adminValue, i.createPersons ? 1 : 0, i.enabled ? 1 : 0, Date.now(), i.id],
  );
}

export async function deleteIssuer(store: Store, id: string): Promise<void> {
  await store.transaction(async (exec) => {
    await exec('delete from identity_oidc_links where issuer_id = ?', [id]);
    await exec('delete from identity_oidc_issuers where id = ?', [id]);
  });
}

/** The person an issuer's subject signed in as before, if any. */
export async function linkedPerson(store: Store, issuerId: string, subject: string): Promise<string | null> {
  const [row] = await store.execute<Row>('select person_id from identity_oidc_links where issuer_id = ? and subject = ?', [issuerId, subject]);
  return row ? String(row.person_id) : null;
}

export async function link(store: Store, issuerId: string, subject: string, personId: string): Promise<void> {
  await store.execute('insert into identity_oidc_links (issuer_id, subject, person_id, created_at) values (?, ?, ?, ?) on conflict do nothing', [issuerId, subject, personId, Date.now()]);
}

/** Password sign-in is on unless an instance admin turned it off. */
export async function passwordSignInOn(store: Store): Promise<boolean> {
  const [row] = await store.execute<Row>("select value from identity_settings where name = 'password_sign_in'");
  return row ? row.value !== 'off' : true;
}

export async function setPasswordSignIn(store: Store, on: boolean): Promise<void> {
  await store.execute(
    "insert into identity_settings (name, value, updated_at) values ('password_sign_in', ?, ?) on conflict (name) do update set value = excluded.value, updated_at = excluded.updated_at",
    [on ? 'on' : 'off', Date.now()],
  );
}
