import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser } from 'playwright-core';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { adminEmail, startWorld, type World } from '../support/provision.js';
import { assertFits, checkA11y, launchBrowser, navTo, pageAt, screenshot } from './browser.js';
import { signIn } from './walkthrough-support.js';

// Issue 28 "Done when", a member's part of the walk at 1440 px and at 390 px: what they create,
// change and remove themselves (API keys, a conversation, their password), what the page shows
// after each step, that it never scrolls sideways, and that the workspace's members are listed
// without actions a member cannot use (no Suspend, Remove, role picker or Add member form).
const test = suite(`admin-ui: walkthrough as a member at 1440 and 390 px (${shape})`);
let w: World;
let upstream: MockUpstream;
let browser: Browser;
const model = 'local:mock-model';
const email = 'mia@example.test';
/** Each width's walk changes the password; the next one signs in with the latest. */
let password = 'a long member password';
const widths = [1440, 390] as const;

test.before(async () => {
  upstream = await new MockUpstream().start();
  w = await startWorld({ plugins: { tracing: { config: { flushIntervalMs: 50 } } } });
  await w.admin.provider('local', upstream.url);
  await w.admin.model(model, { input_price: '1.00', output_price: '2.00' });
  await w.admin.ok('PATCH', `/workspaces/${w.workspaceId}/routing`, { default_model: model });
  await w.admin.ok('POST', '/persons', { email, password, name: 'Mia' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email, role: 'member' });
  browser = await launchBrowser();
});
test.after(async () => {
  await browser?.close();
  await w?.stop();
  await upstream?.stop();
});

for (const width of widths) {
  test(`member at ${width} px: members read-only; a key made, refused twice, revoked; a conversation had, renamed, deleted; My usage counts it; password changed`, async () => {
    const { page, errors } = await pageAt(browser, width);
    const fits = (where: string) => assertFits(page, `member: ${where} at ${width} px`);
    const shot = async (name: string) => {
      await fits(name);
      await checkA11y(page, `member: ${name} at ${width} px`);
      await screenshot(page, `m-${name}-${width}`);
    };
    await signIn(page, w.svc.url, email, password, 'Chat');
    await fits('landing on Chat');

    // The workspace's page: members listed, nothing to manage; their own keys.
    await navTo(page, 'Workspaces');
    await page.getByRole('table', { name: 'Workspaces' }).getByRole('link').first().click();
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('cell', { name: `${email} (you)` }).waitFor();
    await members.getByRole('cell', { name: adminEmail, exact: true }).waitFor();
    assert.is(await members.getByRole('button').count(), 0, 'no Suspend or Remove for a member');
    assert.is(await members.getByRole('combobox').count(), 0, 'no role picker for a member');
    assert.is(await page.getByRole('button', { name: 'Add member' }).count(), 0, 'no Add member form');
    assert.is(await page.getByRole('heading', { name: 'Routing', exact: true }).count(), 0, 'no routing section');
    const keyName = `laptop ${width}`;
    await page.getByLabel('Key name').fill(keyName);
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.match((await page.getByTestId('new-key').textContent()) ?? '', /^svc_/);
    await page.getByText(`Key ${keyName} created.`).waitFor();
    await fits('key shown once');
    await page.getByLabel('Key name').fill(keyName.toUpperCase());
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText(`You already have an active key named “${keyName.toUpperCase()}” in this workspace; choose another name or revoke that key first.`).waitFor();
    await shot('01-workspace');
    await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
    await page.getByRole('dialog').filter({ hasText: `Revoke the key “${keyName}”?` }).getByRole('button', { name: 'Revoke' }).click();
    await page.locator('tr', { hasText: keyName }).getByText(/^Revoked /).waitFor();
    await fits('key revoked');

    // Chat: a message, its reply; the conversation renamed, then found and deleted under Conversations.
    await navTo(page, 'Chat');
    const question = `Hello at ${width}`;
    await page.getByLabel('Message', { exact: true }).fill(question);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('article', { name: 'Reply' }).last().getByText('Hello from the mock.').waitFor();
    await page.getByRole('heading', { level: 2, name: question }).waitFor();
    await fits('a reply in Chat');
    const title = `Greeting ${width}`;
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('Conversation title').fill(title);
    await page.getByRole('button', { name: 'Save title' }).click();
    await page.getByRole('heading', { level: 2, name: title }).waitFor();
    await shot('02-chat');
    await navTo(page, 'Conversations');
    const conversations = page.getByRole('table', { name: 'Your conversations, newest first' });
    await conversations.getByRole('link', { name: title }).waitFor();
    await shot('03-conversations');
    await conversations.getByRole('button', { name: `Delete ${title}` }).click();
    await page.getByRole('dialog').filter({ hasText: `Delete the conversation “${title}”` }).getByRole('button', { name: 'Delete conversation' }).click();
    await conversations.getByRole('link', { name: title }).waitFor({ state: 'detached' });
    await fits('conversation deleted');

    // My usage counts the chat's request among their own.
    await w.svc.service.get(TracingFlushToken)();
    await navTo(page, 'My usage');
    const requests = page.getByRole('region', { name: 'Your requests' });
    const expected = widths.indexOf(width) + 1; // one chat request per walk so far
    await requests.locator('tbody tr').nth(expected - 1).waitFor();
    assert.is(await requests.locator('tbody tr').count(), expected, 'one request per walk so far');
    await requests.getByRole('cell', { name: model }).first().waitFor();
    await shot('04-my-usage');

    // Account: a wrong current password is named at the form; the right one changes it.
    await navTo(page, 'Account');
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill(`${password} ${width}`);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong.').waitFor();
    assert.is(await page.getByLabel('Current password').getAttribute('aria-invalid'), 'true');
    await fits('wrong current password');
    await page.getByLabel('Current password').fill(password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed; your other sign-ins have ended.').waitFor();
    password = `${password} ${width}`;
    await shot('05-account');
    assert.equal(errors, []);
    await page.context().close();
  });
}

test.run();
