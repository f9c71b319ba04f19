import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEmail, adminEnv } from '../support/provision.js';
import { checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// The audit log and sign-in locks in the browser: an admin sees a locked account on the People
// page and lifts it, then finds that and the other changes in the audit log, filtered.
const test = suite(`admin-ui: audit log and sign-in locks (${shape})`);
let backing: Backing;
let svc: TestService;
let browser: Browser;
let page: Page;
let errors: string[];

const throttle = { signInThrottle: { account: { freeFailures: 1, lockAfterFailures: 2 }, firstDelayMs: 1, lockSeconds: 600 } };

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing, env: adminEnv, overrides: { plugins: { identity: { config: throttle } } } });
  const admin = await Admin.signIn(svc.url);
  await admin.ok('POST', '/persons', { email: 'locked@example.test', password: 'locked-person-password' });
  for (let i = 0; i < 2; i++) {
    await fetch(`${svc.url}/admin/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'locked@example.test', password: 'wrong-password-x' }) });
    await new Promise((r) => setTimeout(r, 20));
  }
  ({ browser, page, errors } = await signedInPage(svc.url));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await backing?.drop();
});

test('people: the locked account is listed; lifting it lets the person sign in', async () => {
  await navTo(page, 'People');
  const lift = page.getByRole('button', { name: 'Lift lock on locked@example.test' });
  await lift.waitFor();
  assert.ok(await page.getByRole('cell', { name: 'account locked@example.test' }).isVisible());
  await screenshot(page, '30-sign-in-locks');
  await checkA11y(page, 'people with a lock');
  await lift.click();
  await page.getByText('Lifted the lock on locked@example.test.').waitFor();
  await page.getByText('No account or address is locked.').waitFor();
  const r = await fetch(`${svc.url}/admin/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'locked@example.test', password: 'locked-person-password' }) });
  assert.is(r.status, 201);
});

test('audit log: the changes with who and what, filtered by action and outcome', async () => {
  await navTo(page, 'Audit log');
  const rows = page.locator('tbody tr');
  await page.locator('tr[data-action="sign_in_lock.delete"]').waitFor();
  const created = page.locator('tr[data-action="persons.create"]');
  assert.match((await created.textContent()) ?? '', new RegExp(`${adminEmail}127\\.0\\.0\\.1persons per_\\S+email, password$`));
  assert.not.ok(((await page.locator('table').textContent()) ?? '').includes('locked-person-password'));
  await screenshot(page, '31-audit-log');
  await checkA11y(page, 'audit log');
  await page.getByLabel('Action').fill('session.sign_in');
  await page.getByLabel('Outcome').selectOption('failure');
  await page.getByRole('button', { name: 'Filter' }).click();
  // The page's CSP forbids evaluating a string, so wait with locators: every other row leaves,
  // then the failed sign-ins are there.
  await page.locator('tbody tr:not([data-action="session.sign_in"])').first().waitFor({ state: 'detached' });
  await page.locator('tbody tr[data-action="session.sign_in"]').first().waitFor();
  assert.is(await rows.count(), 2);
  assert.match((await rows.first().textContent()) ?? '', /failed \(invalid_api_key\)/);
});

test('no page error was logged', () => {
  assert.equal(errors, []);
});

test.run();
