import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEmail, adminEnv } from '../support/provision.js';
import { checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// People, members and password reset in the browser: an admin adds a person, makes a reset link
// and adds them to a workspace; the person sets a password from the link and signs in.
const test = suite(`admin-ui: people, members, password reset (${shape})`);
let backing: Backing;
let svc: TestService;
let browser: Browser;
let page: Page;
let errors: string[];

test.before(async () => {
  backing = await createBacking();
  svc = await startService({ backing, env: adminEnv });
  const admin = await Admin.signIn(svc.url);
  await admin.workspace('Research');
  ({ browser, page, errors } = await signedInPage(svc.url));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await backing?.drop();
});

const nav = (name: string) => navTo(page, name);

test('people: add a person and a reset link; the person sets a password there, signs in, sees their workspace', async () => {
  await nav('People');
  await page.getByLabel('Email').fill('bob@example.test');
  await page.getByLabel('Name (optional)').fill('Bob');
  await page.getByRole('button', { name: 'Add person' }).click();
  await page.getByRole('button', { name: 'Reset link for bob@example.test' }).click();
  const link = (await page.locator('.notice code').textContent()) ?? '';
  assert.match(link, new RegExp(`^${svc.url}/#/reset/`));
  await screenshot(page, '09-people');
  await checkA11y(page, 'people');
  await nav('Workspaces');
  await page.getByRole('link', { name: 'Research' }).click();
  await page.getByLabel('Email of the person').fill('bob@example.test');
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('button', { name: 'Suspend bob@example.test' }).waitFor();
  await page.getByLabel('Role of bob@example.test').selectOption('admin');
  await page.getByRole('button', { name: 'Suspend bob@example.test' }).click();
  await page.getByRole('button', { name: 'Reinstate bob@example.test' }).click();
  await page.getByRole('button', { name: 'Suspend bob@example.test' }).waitFor();

  const bob = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const bobPage = await bob.newPage();
  bobPage.setDefaultTimeout(20_000);
  await bobPage.goto(link);
  await bobPage.getByLabel('New password').fill('short');
  await bobPage.getByRole('button', { name: 'Set password' }).click();
  const admin = await Admin.signIn(svc.url);
  const tooShort = await admin.call<{ error: { message: string } }>('POST', '/persons', { email: 'x@example.test', password: 'short' });
  await bobPage.getByText(tooShort.body.error.message, { exact: true }).waitFor();
  await bobPage.getByLabel('New password').fill('bob has a long password');
  await bobPage.getByRole('button', { name: 'Set password' }).click();
  await bobPage.getByRole('link', { name: 'Sign in' }).click();
  await bobPage.getByLabel('Email').fill('bob@example.test');
  await bobPage.getByLabel('Password').fill('bob has a long password');
  await bobPage.getByRole('button', { name: 'Sign in' }).click();
  // Bob administers Research: he lands on Home and has the workspace admin's pages, not the instance admin's.
  await bobPage.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  await bobPage.getByRole('link', { name: 'Budgets', exact: true }).waitFor();
  // On the workspace's page Bob manages the others, never his own row.
  await bobPage.getByRole('link', { name: 'Workspaces', exact: true }).click();
  await bobPage.getByRole('link', { name: 'Research' }).click();
  const members = bobPage.getByRole('table', { name: 'Members' });
  await members.getByRole('cell', { name: 'bob@example.test (you)' }).waitFor();
  assert.is(await members.locator('tr[data-member="bob@example.test"]').getByRole('button').count(), 0, 'no Suspend or Remove on his own row');
  await members.getByRole('button', { name: `Suspend ${adminEmail}` }).waitFor();
  assert.is(await bobPage.getByRole('link', { name: 'Providers' }).count(), 0, 'instance-admin pages are not in a member’s menu');
  await bob.close();
});

test('no page error was logged', () => {
  assert.equal(errors, []);
});

test.run();
