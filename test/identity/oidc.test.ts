import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEnv } from '../support/provision.js';
import { checkA11y, launchBrowser, navTo, screenshot, watchErrors } from '../admin-ui/browser.js';
import { entries } from '../audit/support.js';
import { clientId, clientSecret, TestOpenIdProvider } from './oidc-provider.js';

// Single sign-on end to end: a real OpenID provider on 127.0.0.1, svc, and Chromium clicking
// "Sign in with …", signing in at the provider and coming back.
const test = suite(`identity: single sign-on with OpenID Connect, through Chromium (${shape})`);
let backing: Backing;
let svc: TestService;
let idp: TestOpenIdProvider;
let admin: Admin;
let browser: Browser;
let issuerId: string;
const errors: string[] = [];

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing, env: adminEnv });
  idp = await new TestOpenIdProvider().start(`${svc.url}/admin/v1/oidc/callback`);
  idp.accounts.set('alice', { email: 'alice@example.test', email_verified: true, name: 'Alice', groups: ['staff', 'svc-admins'] });
  idp.accounts.set('bob', { email: 'Bob@Example.test', email_verified: true, groups: ['staff'] });
  idp.accounts.set('carol', { email: 'carol@elsewhere.test', email_verified: true });
  idp.accounts.set('dave', { email: 'dave@example.test', email_verified: false });
  admin = await Admin.signIn(svc.url);
  browser = await launchBrowser();
});
test.after(async () => {
  await browser?.close();
  await idp?.stop();
  await svc?.stop();
  await backing?.drop();
});

/** A fresh browser (no session at svc or the provider) on svc's sign-in page. */
async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  errors.push(...watchErrors(page));
  await page.goto(`${svc.url}/`);
  return { context, page };
}

/** Clicks "Sign in with Test IdP", signs in at the provider as `login` and consents; ends wherever svc sends the browser. */
async function signInAs(page: Page, login: string): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

const refusal = async (page: Page) => {
  await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
  return (await page.locator('main p').first().textContent()) ?? '';
};

test('an instance admin adds the provider; the client secret is stored, never shown', async () => {
  const bad = await admin.call<any>('POST', '/oidc/issuers', { name: 'Broken', discovery_url: 'http://127.0.0.1:9/', client_id: 'x' });
  assert.is(bad.status, 400);
  assert.is(bad.body.error.param, 'discovery_url');
  const r = await admin.call<any>('POST', '/oidc/issuers', {
    name: 'Test IdP', discovery_url: idp.issuer, client_id: clientId, client_secret: clientSecret, allowed_domains: ['example.test'],
    admin_claim: 'groups', admin_value: 'svc-admins', create_persons: false,
  });
  assert.is(r.status, 201);
  issuerId = r.body.id;
  assert.is(r.body.has_client_secret, true);
  assert.is(r.body.redirect_uri, `${svc.url}/admin/v1/oidc/callback`);
  const list = await admin.call<any>('GET', '/oidc/issuers');
  assert.is(list.body.data.length, 1);
  assert.not.ok(JSON.stringify(list.body).includes(clientSecret));
  const options = await (await fetch(`${svc.url}/admin/v1/sign-in-options`)).json();
  assert.equal(options, { password: true, issuers: [{ id: issuerId, name: 'Test IdP', start_url: `/admin/v1/oidc/issuers/${issuerId}/start` }] });
});

test('the Single sign-on page lists the provider with its redirect URI; the sign-in page offers it beside the password', async () => {
  const { context, page } = await freshPage();
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
  await page.getByLabel('Email').fill(adminEnv.SVC_ADMIN_EMAIL);
  await page.getByLabel('Password').fill(adminEnv.SVC_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor(); // an admin lands on Home
  await navTo(page, 'Single sign-on');
  const row = page.getByRole('row').filter({ hasText: 'Test IdP' });
  await row.waitFor();
  const text = (await row.textContent()) ?? '';
  for (const part of [idp.issuer, `${clientId} (secret set)`, 'example.test', 'groups = svc-admins', 'must exist', `${svc.url}/admin/v1/oidc/callback`]) assert.ok(text.includes(part), part);
  assert.not.ok(((await page.content()) ?? '').includes(clientSecret));
  await page.getByText('Password sign-in is on.').waitFor();
  await screenshot(page, '42-single-sign-on');
  await checkA11y(page, 'single sign-on');
  await context.close();
});

test('policy: a person who does not exist is refused while the provider may not create persons', async () => {
  const { context, page } = await freshPage();
  await signInAs(page, 'alice');
  assert.match(await refusal(page), /no account for your e-mail address/);
  await context.close();
  assert.not.ok((await admin.ok<{ data: Array<{ email: string }> }>('GET', '/persons')).data.some((p) => p.email === 'alice@example.test'));
});

test('sign-in creates the person; the admin claim makes them an instance admin; sign-out ends the session', async () => {
  await admin.ok('PATCH', `/oidc/issuers/${issuerId}`, { create_persons: true });
  const { context, page } = await freshPage();
  await signInAs(page, 'alice');
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor(); // an instance admin lands on Home
  assert.ok(await page.getByRole('link', { name: 'People', exact: true }).isVisible(), 'instance-admin pages are in the menu');
  await screenshot(page, '40-oidc-signed-in');
  const alice = (await admin.ok<{ data: Array<{ id: string; email: string; instance_admin: boolean; name: string | null; password_set: boolean }> }>('GET', '/persons')).data.find((p) => p.email === 'alice@example.test');
  assert.equal({ admin: alice?.instance_admin, name: alice?.name, password: alice?.password_set }, { admin: true, name: 'Alice', password: false });
  const cookie = (await context.cookies()).find((c) => c.name === 'svc_session');
  assert.ok(cookie?.httpOnly && cookie.sameSite === 'Strict');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in to svc' }).waitFor();
  const me = await fetch(`${svc.url}/admin/v1/me`, { headers: { cookie: `svc_session=${cookie!.value}` } });
  assert.is(me.status, 401, 'the session is over');
  await context.close();
});

test('a person without the admin claim is a plain person (e-mail compared without case)', async () => {
  const { context, page } = await freshPage();
  await signInAs(page, 'bob');
  await page.getByRole('heading', { level: 1, name: 'Chat' }).waitFor(); // a plain person lands on Chat
  assert.is(await page.getByRole('link', { name: 'People', exact: true }).count(), 0);
  const bob = (await admin.ok<{ data: Array<{ email: string; instance_admin: boolean }> }>('GET', '/persons')).data.find((p) => p.email === 'bob@example.test');
  assert.is(bob?.instance_admin, false);
  await context.close();
});

test('policy: an e-mail domain not allowed, and an unverified e-mail, are refused', async () => {
  for (const [login, text] of [['carol', /domain may not sign in/], ['dave', /not verified your e-mail/]] as const) {
    const { context, page } = await freshPage();
    await signInAs(page, login);
    assert.match(await refusal(page), text);
    await context.close();
  }
});

test('a suspended person is refused', async () => {
  const bob = (await admin.ok<{ data: Array<{ id: string; email: string }> }>('GET', '/persons')).data.find((p) => p.email === 'bob@example.test')!;
  await admin.ok('PATCH', `/persons/${bob.id}`, { status: 'suspended' });
  const { context, page } = await freshPage();
  await signInAs(page, 'bob');
  assert.match(await refusal(page), /suspended/);
  await context.close();
  await admin.ok('PATCH', `/persons/${bob.id}`, { status: 'active' });
});

/**
 * Changes one parameter of the authorization request svc sends the browser to (the Location of its
 * start redirect), as an attacker in the middle would. Playwright routes a navigation, not the
 * redirects it follows, so the start request is fetched here and answered with the changed Location.
 */
async function tamper(page: Page, param: 'state' | 'nonce', value: (old: string) => string): Promise<void> {
  await page.route(/\/admin\/v1\/oidc\/issuers\/[^/]+\/start$/, async (route) => {
    const response = await route.fetch({ maxRedirects: 0 });
    const location = new URL(response.headers().location!);
    location.searchParams.set(param, value(location.searchParams.get(param) ?? ''));
    await route.fulfill({ response, headers: { ...response.headers(), location: location.href } });
  });
}

test('a tampered state is refused', async () => {
  const { context, page } = await freshPage();
  await tamper(page, 'state', (old) => `${old}x`);
  await signInAs(page, 'alice');
  assert.match(await refusal(page), /unknown or took too long/);
  await context.close();
});

test('a tampered nonce is refused (the ID token does not carry the one svc sent)', async () => {
  const { context, page } = await freshPage();
  await tamper(page, 'nonce', () => 'nonce-chosen-by-an-attacker');
  await signInAs(page, 'alice');
  assert.match(await refusal(page), /could not be verified/);
  await context.close();
  const failed = svc.logs.events('identity.oidc_sign_in_failed');
  assert.ok(failed.some((e) => e.reason === 'failed' && typeof e.error === 'string'), 'the nonce mismatch is logged with its error code');
  assert.ok(['expired', 'suspended', 'unknown_person', 'domain_not_allowed'].every((r) => failed.some((e) => e.reason === r)));
});

test('password sign-in can be turned off (the sign-in page then offers the provider only) and on again', async () => {
  assert.is((await admin.call('PUT', '/sign-in-settings', { password_sign_in: false })).status, 200);
  const pw = await fetch(`${svc.url}/admin/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: adminEnv.SVC_ADMIN_EMAIL, password: adminEnv.SVC_ADMIN_PASSWORD }) });
  assert.is(pw.status, 403);
  const { context, page } = await freshPage();
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
  assert.is(await page.getByLabel('Password').count(), 0);
  await screenshot(page, '41-oidc-only');
  await context.close();
  const off = await admin.call<any>('PATCH', `/oidc/issuers/${issuerId}`, { enabled: false });
  assert.is(off.status, 400, 'the only way in stays on');
  assert.is((await admin.call('PUT', '/sign-in-settings', { password_sign_in: true })).status, 200);
});

test('audit: sign-ins through the provider, refusals included; the client secret appears nowhere', async () => {
  const all = await entries(admin, '?action=session.sign_in_oidc&limit=200');
  assert.ok(all.filter((e) => e.outcome === 'success').length >= 2);
  assert.ok(all.some((e) => e.outcome === 'failure' && e.error_code === 'forbidden'));
  const text = JSON.stringify(await entries(admin, '?limit=200'));
  assert.not.ok(text.includes(clientSecret));
  assert.not.ok(svc.logs.text.includes(clientSecret));
  assert.is((await admin.call('DELETE', `/oidc/issuers/${issuerId}`)).status, 204);
  assert.equal(errors, []);
});

test.run();
