import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { assertFits, checkA11y, launchBrowser, navTo, pageAt, screenshot } from './browser.js';
import { adminEmail, adminPassword, createAdminWithCli, menuOf, signIn } from './walkthrough-support.js';

// Issue 28 "Done when", as an admin at 1440 px and again at 390 px: the README's first steps in
// the browser, then create, edit and remove each resource, checking what each page shows (messages
// next to fields, every error at once, confirmations, warnings) and, after each step, that the
// page itself does not scroll sideways. walkthrough-member.test.ts walks a member's part and
// walkthrough-pages.test.ts opens every page at both widths as both.
const widths = [1440, 390] as const;
for (const width of widths) walk(width);

/** The whole walk at one width: its own backing, service and browser (the names it adds would clash). */
function walk(width: number): void {
  const test = suite(`admin-ui: walkthrough as an admin at ${width} px (${shape})`);
  let backing: Backing;
  let svc: TestService;
  let upstream: MockUpstream;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let apiKey = '';
  const model = 'local:mock-model';
  const form = (title: string) => page.locator('form', { has: page.getByRole('heading', { name: title, exact: true }) });
  const dialog = () => page.getByRole('dialog');
  /** After a step: the page fits the width (no sideways scrolling of the page itself). */
  const fits = (where: string) => assertFits(page, `${where} at ${width} px`);
  /** Waits until the requests table shows exactly `n` rows (the page's CSP forbids waitForFunction). */
  async function rowCount(n: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await page.locator('table.requests tbody tr').count()) === n) return;
      await page.waitForTimeout(100);
    }
    assert.is(await page.locator('table.requests tbody tr').count(), n, 'rows in the requests table');
  }

  test.before(async () => {
    backing = await createBacking();
    createAdminWithCli(backing);
    upstream = await new MockUpstream({ apiKey: 'sk-up' }).start();
    upstream.models = ['mock-model', 'mock-large', 'mock-extra'];
    svc = await startService({ backing, overrides: { plugins: { tracing: { config: { flushIntervalMs: 50 } } } } });
    browser = await launchBrowser();
    ({ page, errors } = await pageAt(browser, width));
  });
  test.after(async () => {
    await browser?.close();
    await svc?.stop();
    await upstream?.stop();
    await backing?.drop();
  });

  test('the sign-in page says how the first admin is made; the admin lands on Home with a grouped sidebar', async () => {
    await page.goto(`${svc.url}/`);
    await page.getByRole('heading', { name: 'First time here?' }).waitFor();
    await page.getByText(/bash scripts\/svc\.sh admin create-admin --email you@example\.com --password-file/).waitFor();
    await fits('sign-in page');
    await checkA11y(page, 'sign in');
    await screenshot(page, `w-01-sign-in-${width}`);
    await signIn(page, svc.url, adminEmail, adminPassword, 'Home');
    // Below 900 px the sidebar folds behind the Menu button: open it to read it, then fold it again.
    const menuButton = page.getByRole('button', { name: 'Menu' });
    if (width < 900) await menuButton.click();
    assert.equal(await menuOf(page), [
      'Overview', 'Home', 'Chat', 'My usage', 'Workspaces', 'Workspaces', 'Budgets', 'Usage', 'Requests', 'Recorded prompts', 'Tools',
      'Models and providers', 'Providers', 'Models', 'Catalogue feed', 'People', 'People', 'Single sign-on', 'System', 'Audit log', 'Retention', 'Diagnostics', 'You', 'Conversations', 'Account',
    ]);
    if (width < 900) {
      await fits('the menu open');
      await menuButton.click();
    }
    await page.getByText('No requests in this range yet.').waitFor();
    await fits('empty Home');
  });

  test('providers and models: every mistake of the model form at once, in words; add, edit prices, search the built-ins', async () => {
    await navTo(page, 'Providers');
    await page.getByLabel('Name', { exact: true }).fill('local');
    await page.getByLabel('Address', { exact: true }).fill(upstream.url);
    await page.getByLabel('API key (optional)').fill('sk-up');
    await page.getByRole('button', { name: 'Add and check' }).click();
    await page.locator('tr[data-provider="local"]').getByText('Connected').waitFor();
    await fits('provider added');
    // Import from the provider's own list: choose which, give their limits and prices.
    await page.getByRole('button', { name: 'Import models of local' }).click();
    const imp = dialog();
    await imp.getByText('local lists 3 models; 0 are added already.').waitFor();
    await imp.getByRole('button', { name: 'Add 0 models' }).click();
    await imp.getByText('Choose at least one model above.').waitFor();
    await fits('import dialog, nothing chosen');
    await imp.getByLabel('mock-extra').check();
    await imp.getByLabel('Context window (tokens)').fill('8192');
    await imp.getByLabel('Output limit (tokens)').fill('1024');
    await imp.getByLabel('Input price (USD per million tokens)').fill('0');
    await imp.getByLabel('Output price (USD per million tokens)').fill('0');
    await imp.getByRole('button', { name: 'Add 1 model' }).click();
    await imp.getByText(/^Added 1 of 1 model;/).waitFor();
    await imp.getByText('local lists 3 models; 1 are added already.').waitFor();
    await fits('import dialog, one added');
    await checkA11y(page, 'import models');
    await screenshot(page, `w-07-import-models-${width}`);
    await imp.getByRole('button', { name: 'Close' }).click();

    await navTo(page, 'Models');
    const add = form('Add a model');
    await add.getByRole('button', { name: 'Add model' }).click();
    await add.getByText('Check the 5 fields marked below.').waitFor();
    for (const text of ['Write <provider>:<model id>', 'Enter the context window as a whole number', 'Enter the output limit as a whole number', 'Enter US dollars per million input tokens', 'Enter US dollars per million output tokens']) {
      await add.getByText(text, { exact: false }).waitFor();
    }
    assert.not.ok(await add.getByText(/Expected|required property|\^\[/).count(), 'no schema or regex wording');
    await fits('model form errors');
    await add.getByLabel('Name', { exact: true }).fill(model);
    await add.getByLabel('Context window (tokens)').fill('32768');
    await add.getByLabel('Output limit (tokens)').fill('65536');
    await add.getByLabel('Input price (USD per million tokens)').fill('0.20');
    await add.getByLabel('Output price (USD per million tokens)').fill('0.60');
    await add.getByRole('button', { name: 'Add model' }).click();
    await add.getByText('The output limit (65536) must not exceed the context window (32768).').waitFor();
    await add.getByLabel('Output limit (tokens)').fill('4096');
    await add.getByRole('button', { name: 'Add model' }).click();
    await add.getByText(`${model} added.`).waitFor();
    await fits('model added');
    await add.getByLabel('Name', { exact: true }).fill('local:mock-large');
    for (const [l, v] of [['Context window (tokens)', '65536'], ['Output limit (tokens)', '8192'], ['Input price (USD per million tokens)', '1'], ['Output price (USD per million tokens)', '2']]) await add.getByLabel(l!).fill(v!);
    await add.getByRole('button', { name: 'Add model' }).click();
    await page.getByRole('button', { name: 'Edit local:mock-large' }).click();
    const edit = form('Edit local:mock-large');
    await edit.getByLabel('Output price (USD per million tokens)').fill('3.5');
    await edit.getByRole('button', { name: 'Save model' }).click();
    await page.getByText('local:mock-large saved.').waitFor();
    await fits('model edited');
    await page.locator('tr', { hasText: 'local:mock-large' }).getByRole('cell', { name: /^3\.50?$/ }).waitFor();
    // The built-in list: search instead of 16 pages; prices in a form, not window.prompt().
    const builtIns = page.getByLabel('Search built-in models');
    await builtIns.fill('zzz-no-such-model');
    await page.getByText(/^0 of \d+ shown\.$/).waitFor();
    await fits('built-in search');
    await builtIns.fill('');
  });

  test('workspaces and keys: duplicate names refused next to the field; rename; key shown once', async () => {
    await navTo(page, 'Workspaces');
    await page.getByRole('button', { name: 'Add workspace' }).click();
    await page.getByText('Give the workspace a name, e.g. Research.').waitFor();
    await page.getByLabel('Workspace name').fill('Research');
    await page.getByRole('button', { name: 'Add workspace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Research' }).waitFor();
    await page.getByText('Workspace Research added.', { exact: false }).waitFor();
    await fits('workspace added');
    await navTo(page, 'Workspaces');
    await page.getByLabel('Workspace name').fill('research');
    await page.getByRole('button', { name: 'Add workspace' }).click();
    await page.getByText('A workspace named “research” already exists; choose another name.').waitFor();
    assert.is(await page.getByLabel('Workspace name').getAttribute('aria-invalid'), 'true');
    await fits('duplicate workspace refused');
    await page.getByLabel('Workspace name').fill('Sandbox');
    await page.getByRole('button', { name: 'Add workspace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sandbox' }).waitFor();
    await page.locator('form', { has: page.getByRole('button', { name: 'Rename' }) }).getByLabel('Workspace name').fill('Research');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('A workspace named “Research” already exists; choose another name.').waitFor();
    await page.locator('form', { has: page.getByRole('button', { name: 'Rename' }) }).getByLabel('Workspace name').fill('Playground');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('Renamed to Playground.').waitFor();
    await fits('workspace renamed');

    await navTo(page, 'Workspaces');
    await page.getByRole('link', { name: 'Research' }).click();
    await page.getByLabel('Key name').fill('notebook');
    await page.getByRole('button', { name: 'Create key' }).click();
    apiKey = (await page.getByTestId('new-key').textContent()) ?? '';
    assert.match(apiKey, /^svc_/);
    await page.getByText('Key notebook created.').waitFor();
    await fits('key shown once');
    await page.getByLabel('Key name').fill('Notebook');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('You already have an active key named “Notebook” in this workspace; choose another name or revoke that key first.').waitFor();
    await fits('duplicate key refused');
  });

  test('routing: pickers of added models, a route added, edited (fallback order) and its settings saved', async () => {
    const routing = page.locator('section', { has: page.getByRole('heading', { name: 'Routing', exact: true }) });
    await routing.getByRole('button', { name: 'Add route' }).click();
    await routing.getByText('Give the route a name, e.g. code.').waitFor();
    await routing.getByText('Choose the model this route sends to.').waitFor();
    await routing.getByLabel('Route name').fill('Code Help');
    await routing.getByRole('button', { name: 'Add route' }).click();
    await routing.getByText(/^Use lowercase letters, numbers, dashes and underscores/).waitFor();
    await fits('route form errors');
    await routing.getByLabel('Route name').fill('code');
    await routing.getByLabel('Route model').selectOption(model);
    await routing.getByLabel('What the route is for').fill('Programming help');
    await routing.getByRole('button', { name: 'Add route' }).click();
    await page.getByText('Route code added.').waitFor();
    await page.getByRole('button', { name: 'Edit route code' }).click();
    const d = dialog();
    await d.getByRole('button', { name: 'Add fallback' }).click();
    await d.getByLabel('Fallback 1', { exact: true }).selectOption('local:mock-large');
    await d.getByRole('button', { name: 'Add fallback' }).click();
    await d.getByLabel('Fallback 2', { exact: true }).selectOption(model);
    await d.getByRole('button', { name: 'Save route' }).click();
    await d.getByText('The route’s own model cannot also be a fallback.').waitFor();
    await fits('route dialog error');
    await d.getByRole('button', { name: 'Remove fallback 2' }).click();
    await d.getByLabel('Enabled').check();
    await d.getByRole('button', { name: 'Save route' }).click();
    await page.getByText('Route code saved.').waitFor();
    await page.locator('tr[data-route="code"]').getByRole('cell', { name: 'local:mock-large', exact: true }).waitFor();
    await fits('route edited');
    const settings = page.locator('form', { has: page.getByRole('heading', { name: 'Routing settings' }) });
    await settings.getByLabel('Default model').selectOption(model);
    await settings.getByLabel('Code route (optional)').selectOption('code');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Routing settings saved.').waitFor();
    await fits('routing settings saved');
    await checkA11y(page, 'workspace page');
    await screenshot(page, `w-02-workspace-${width}`);
  });

  test('people: add (confirmed), edit name and instance admin, no Suspend or Remove on your own row; members', async () => {
    await navTo(page, 'People');
    const add = form('Add a person');
    await add.getByLabel('Email').fill('not-an-email');
    await add.getByLabel('Password (optional)').fill('short');
    await add.getByRole('button', { name: 'Add person' }).click();
    await add.getByText('Check the 2 fields marked below.').waitFor();
    await fits('person form errors');
    await add.getByLabel('Email').fill('member@example.com');
    await add.getByLabel('Password (optional)').fill('a long member password');
    await add.getByRole('button', { name: 'Add person' }).click();
    await add.getByText(/^member@example\.com added\. They can sign in with that password\./).waitFor();
    await fits('person added');
    const own = page.locator(`tr[data-person="${adminEmail}"]`);
    assert.is(await own.getByRole('button', { name: /^Suspend/ }).count(), 0, 'no Suspend on your own row');
    assert.is(await own.getByRole('button', { name: /^Remove/ }).count(), 0, 'no Remove on your own row');
    await page.getByRole('button', { name: 'Edit member@example.com' }).click();
    await dialog().getByLabel('Name').fill('Mia Member');
    await dialog().getByLabel(/^Instance admin/).check();
    await dialog().getByRole('button', { name: 'Save' }).click();
    await page.getByText('member@example.com saved.').waitFor();
    const row = page.locator('tr[data-person="member@example.com"]');
    await row.getByRole('cell', { name: 'Mia Member' }).waitFor();
    await row.getByRole('cell', { name: 'yes', exact: true }).first().waitFor();
    await fits('person edited');
    await page.getByRole('button', { name: 'Edit member@example.com' }).click();
    await dialog().getByLabel(/^Instance admin/).uncheck();
    await dialog().getByRole('button', { name: 'Save' }).click();
    await page.getByText('member@example.com saved.').waitFor();
    await navTo(page, 'Workspaces');
    await page.getByRole('link', { name: 'Research' }).click();
    await page.getByLabel('Email of the person').fill('member@example.com');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByText('member@example.com added as member.').waitFor();
    // Members: no action on your own row (it would lock you out); the other member's can be changed.
    const members = page.getByRole('table', { name: 'Members' });
    const mine = members.locator(`tr[data-member="${adminEmail}"]`);
    await mine.getByRole('cell', { name: `${adminEmail} (you)` }).waitFor();
    assert.is(await mine.getByRole('button').count(), 0, 'no Suspend or Remove on your own row');
    assert.is(await mine.getByRole('combobox').count(), 0, 'no role picker on your own row');
    await members.getByRole('button', { name: 'Suspend member@example.com' }).click();
    await members.locator('tr[data-member="member@example.com"]').getByRole('cell', { name: 'suspended', exact: true }).waitFor();
    await members.getByRole('button', { name: 'Reinstate member@example.com' }).click();
    await members.locator('tr[data-member="member@example.com"]').getByRole('cell', { name: 'active', exact: true }).waitFor();
    await fits('member added, suspended and reinstated');
  });

  test('budgets: a $0 cap needs an explicit confirmation; thresholds in words; edit amount, period and thresholds; names, not ids', async () => {
    await navTo(page, 'Budgets');
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
    const add = form('Add a cap in this workspace');
    await add.getByLabel('Applies to').selectOption('member');
    await add.getByLabel('Member', { exact: true }).selectOption({ label: 'member@example.com' });
    await add.getByLabel('Amount (US dollars)').fill('0');
    await add.getByLabel(/^Alert at/).fill('50, lots');
    await add.getByRole('button', { name: 'Add cap' }).click();
    await add.getByText('A cap of $0 stops every request it covers.', { exact: false }).waitFor();
    await add.getByText('Enter whole percentages from 1 to 1000 separated by commas, e.g. 50, 80, 100.').waitFor();
    await fits('cap form errors');
    await add.getByLabel(/^Alert at/).fill('50, 80');
    await add.getByLabel(/^Yes, a \$0 cap/).check();
    await add.getByRole('button', { name: 'Add cap' }).click();
    await page.getByText('Cap added.').waitFor();
    const row = page.locator('tr', { hasText: 'member@example.com in Research' });
    await row.getByRole('cell', { name: '$0.00', exact: true }).first().waitFor();
    await row.getByRole('button', { name: /^Edit member cap/ }).click();
    await dialog().getByLabel('Amount (US dollars)').fill('5');
    await dialog().getByLabel('Period').selectOption('week');
    await dialog().getByLabel(/^Alert at/).fill('75');
    await dialog().getByRole('button', { name: 'Save cap' }).click();
    await page.getByText('Cap saved.').waitFor();
    await row.getByRole('cell', { name: '$5.00', exact: true }).first().waitFor();
    await row.getByRole('cell', { name: 'week', exact: true }).waitFor();
    await row.getByRole('cell', { name: '75%', exact: true }).waitFor();
    await fits('cap edited');
    await add.getByLabel('Amount (US dollars)').fill('100');
    await add.getByRole('button', { name: 'Add cap' }).click();
    await page.getByText('Cap added.').waitFor();
    await checkA11y(page, 'budgets');
    await screenshot(page, `w-03-budgets-${width}`);
  });

  test('requests: the explorer filters by route and status; the trace shows person, decision and each attempt; Home counts them', async () => {
    const client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey, maxRetries: 0 });
    await client.chat.completions.create({ model: 'route/code', messages: [{ role: 'user', content: 'Fix this bug' }] });
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] });
    await client.chat.completions.create({ model: 'local:nope', messages: [{ role: 'user', content: 'Hi' }] }).catch(() => {});
    await svc.service.get(TracingFlushToken)();
    await navTo(page, 'Requests');
    await page.getByLabel('Route').fill('code');
    await page.getByRole('button', { name: 'Filter' }).click();
    const rows = page.locator('table.requests tbody tr');
    await rowCount(1);
    await rows.first().getByRole('cell', { name: 'route/code' }).waitFor();
    await rows.first().getByRole('cell', { name: adminEmail }).waitFor();
    await page.getByLabel('Route').fill('');
    await page.getByLabel('HTTP status').fill('4o4');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('Enter an HTTP status such as 200, 402 or 502.').waitFor();
    await page.getByLabel('HTTP status').fill('404');
    await page.getByRole('button', { name: 'Filter' }).click();
    await rowCount(1);
    await rows.first().getByText('model_not_found').waitFor();
    await fits('requests filtered by status');
    await page.getByLabel('HTTP status').fill('');
    await page.getByLabel('Routing rule').selectOption('explicit');
    await page.getByRole('button', { name: 'Filter' }).click();
    await rowCount(2); // the unknown model was refused before a rule chose anything
    await checkA11y(page, 'requests');
    await screenshot(page, `w-04-requests-${width}`);
    await page.locator('table.requests tbody tr', { hasText: 'route/code' }).getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: /^Request req_/ }).waitFor();
    const facts = page.locator('dl.facts').nth(1);
    await facts.getByText(adminEmail).waitFor();
    await facts.getByText('route/code').waitFor();
    await facts.getByText('explicit (the client named it)').waitFor();
    await page.locator('tr[data-attempt="1"]').getByRole('cell', { name: model }).waitFor();
    await checkA11y(page, 'trace');
    await screenshot(page, `w-05-trace-${width}`);
    await navTo(page, 'Home');
    await page.getByRole('listitem').filter({ hasText: 'Requests' }).getByText('3', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Top routes' }).getByRole('cell', { name: 'route/code' }).waitFor();
    await page.getByText(/^Budget use$/).waitFor();
    await checkA11y(page, 'home');
    await screenshot(page, `w-06-home-${width}`);
  });

  test('removing a model that routes and settings use names them first; Cancel keeps it', async () => {
    await navTo(page, 'Models');
    await page.getByRole('button', { name: `Remove ${model}` }).click();
    const d = page.getByRole('dialog').filter({ hasText: 'still in use' });
    await d.getByText(`${model} is still in use.`).waitFor();
    await d.getByText('the route code in Research').waitFor();
    await d.getByText('the default model of Research').waitFor();
    await fits('model in use warning');
    await d.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Remove local:mock-large' }).click();
    const d2 = page.getByRole('dialog').filter({ hasText: 'local:mock-large is still in use.' });
    await d2.getByText('a fallback of the route code in Research').waitFor();
    await d2.getByRole('button', { name: 'Remove model' }).click();
    await page.getByText('local:mock-large removed.').waitFor();
    assert.is(await page.getByRole('button', { name: 'Remove local:mock-large' }).count(), 0, 'the list was read again before the message');
    await fits('model removed');
  });

  test('removing: a route, a key, a member, a cap, a person; then nothing on the page failed', async () => {
    await navTo(page, 'Workspaces');
    await page.getByRole('link', { name: 'Research' }).click();
    await page.getByRole('button', { name: 'Remove route code' }).click();
    await dialog().filter({ hasText: 'Remove the route code?' }).getByRole('button', { name: 'Remove route' }).click();
    await page.getByText('Route code removed.').waitFor();
    assert.is(await page.getByRole('button', { name: 'Remove route code' }).count(), 0, 'the list was read again before the message');
    await fits('route removed');
    await page.getByRole('button', { name: 'Revoke notebook' }).click();
    await dialog().filter({ hasText: 'Revoke the key' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(/^Revoked /).waitFor();
    await fits('key revoked');
    await page.getByRole('button', { name: 'Remove member@example.com' }).click();
    await dialog().filter({ hasText: 'Remove member@example.com from this workspace?' }).getByRole('button', { name: 'Remove', exact: true }).click();
    await page.locator('tr[data-member="member@example.com"]').waitFor({ state: 'detached' });
    await fits('member removed');
    await navTo(page, 'Budgets');
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
    await page.getByRole('button', { name: /^Delete workspace cap \$100\.00/ }).click();
    await dialog().filter({ hasText: 'Delete this cap?' }).getByRole('button', { name: 'Delete cap' }).click();
    await page.getByText('Cap deleted.').waitFor();
    await fits('cap removed');
    await navTo(page, 'People');
    await page.getByRole('button', { name: 'Remove member@example.com' }).click();
    await dialog().filter({ hasText: 'Remove member@example.com for good?' }).getByRole('button', { name: 'Remove person' }).click();
    await page.getByText('member@example.com removed.').waitFor();
    // The message shows only once the list was read again (ui.js useLoad): the row is gone by then.
    assert.is(await page.locator('tr[data-person="member@example.com"]').count(), 0);
    await fits('person removed');
    await checkA11y(page, 'people');
    await screenshot(page, `w-08-people-${width}`);
    assert.equal(errors, []);
  });

  test.run();
}
