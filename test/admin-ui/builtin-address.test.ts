import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { MockAnthropic } from '../support/mock-anthropic.js';
import { Admin, adminEnv } from '../support/provision.js';
import { checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// Issue 27 item 8 in the browser: an instance admin points a built-in provider at another address
// (shown on its row, checked after saving), a refused address is shown at its field, and emptying
// the field puts the default back.
const test = suite(`admin-ui: a built-in provider's address (${shape})`);
const key = 'sk-ant-ui-address-3c9d';
const home = new MockAnthropic({ apiKey: key });
const regional = new MockAnthropic({ apiKey: key });
let backing: Backing;
let svc: TestService;
let admin: Admin;
let browser: Browser;
let page: Page;
let errors: string[];

test.before(async () => {
  await home.start();
  await regional.start();
  backing = await createBacking();
  svc = await startService({ backing, env: adminEnv, overrides: { plugins: { catalog: { config: { builtInAddresses: { anthropic: home.url } } } } } });
  admin = await Admin.signIn(svc.url);
  await admin.ok('PATCH', '/providers/anthropic', { api_key: key });
  ({ browser, page, errors } = await signedInPage(svc.url));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await backing?.drop();
  await home.stop();
  await regional.stop();
});

test('set an address on a built-in: refused one at its field, then saved, checked and shown on its row; requests go there', async () => {
  await navTo(page, 'Providers');
  const row = page.locator('tr[data-provider="anthropic"]');
  await row.getByText(home.url, { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Change anthropic' }).click();
  const address = page.getByLabel('Address', { exact: true }).first();
  assert.is(await address.inputValue(), '');
  await page.getByText(`Leave empty to use the default, ${home.url}.`, { exact: false }).waitFor();
  const refused = await admin.call<{ error: { message: string } }>('PATCH', '/providers/anthropic', { address: 'ftp://proxy.example/v1' });
  await address.fill('ftp://proxy.example/v1');
  await page.getByRole('button', { name: 'Save and check' }).click();
  await page.getByText(refused.body.error.message.replace(/^address: m/, 'M'), { exact: true }).waitFor();
  assert.is(await address.getAttribute('aria-invalid'), 'true');

  await address.fill(`${regional.url}/`);
  const checksBefore = regional.requests.filter((r) => r.path === '/v1/models').length;
  await page.getByRole('button', { name: 'Save and check' }).click();
  await row.getByText(regional.url, { exact: true }).first().waitFor();
  await row.getByText('(set here; default').waitFor();
  await row.getByText('Connected').waitFor();
  assert.is(regional.requests.filter((r) => r.path === '/v1/models').length, checksBefore + 1);
  await screenshot(page, 'builtin-address');
  await checkA11y(page, 'providers with a built-in address');

  const client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: await admin.key(await admin.workspace('Address')), maxRetries: 0 });
  await client.chat.completions.create({ model: 'anthropic:claude-sonnet-4-5-20250929', messages: [{ role: 'user', content: 'hi' }] });
  assert.is(regional.requests.filter((r) => r.path === '/v1/messages').length, 1);
});

test('emptying the field puts the default address back', async () => {
  const row = page.locator('tr[data-provider="anthropic"]');
  await page.getByRole('button', { name: 'Change anthropic' }).click();
  const address = page.getByLabel('Address', { exact: true }).first();
  assert.is(await address.inputValue(), regional.url);
  await address.fill('');
  await page.getByRole('button', { name: 'Save and check' }).click();
  // The default also shows inside the "(set here; default …)" note: wait for the note to go.
  await row.getByText('(set here; default').waitFor({ state: 'detached' });
  await row.getByText(home.url, { exact: true }).waitFor();
  assert.is((await admin.ok<{ address: string }>('GET', '/providers/anthropic')).address, home.url);
  assert.equal(errors, []);
});

test.run();
