import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, adminEmail, adminEnv, adminPassword } from '../support/provision.js';
import { assertFits, checkA11y, launchBrowser, navTo, screenshot, watchErrors } from './browser.js';

// The README's "First steps" done in the browser, then a chat request with the key made there
// found under Requests (with its trace) and Usage. One browser and one service for the suite.
const test = suite(`admin-ui: first steps in the browser (${shape})`);
let backing: Backing;
let svc: TestService;
let upstream: MockUpstream;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let apiKey = '';
let requestId = '';
const upstreamKey = 'sk-upstream-right';

test.before(async () => {
  backing = await createBacking();
  upstream = await new MockUpstream({ apiKey: upstreamKey }).start();
  upstream.models = ['mock-model'];
  svc = await startService({ backing, env: adminEnv, overrides: { plugins: { tracing: { config: { flushIntervalMs: 50 } } } } });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  context.setDefaultTimeout(20_000);
  page = await context.newPage();
  errors = watchErrors(page);
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await upstream?.stop();
  await backing?.drop();
});

const nav = (name: string) => navTo(page, name);

test('the UI is served at / with a strict CSP; sign-in page is accessible', async () => {
  const res = await fetch(`${svc.url}/`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  await page.goto(`${svc.url}/`);
  await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
  await screenshot(page, '01-sign-in');
  await checkA11y(page, 'sign in');
});

test('a wrong password shows the API message; the right one signs in with a Strict cookie', async () => {
  await page.getByLabel('Email').fill(adminEmail);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'The email or password is wrong.' }).waitFor();
  await page.getByLabel('Password').fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  const cookie = (await context.cookies()).find((c) => c.name === 'svc_session');
  assert.is(cookie?.sameSite, 'Strict');
  assert.is(cookie?.httpOnly, true);
});

test('providers: an invalid name shows the API error at the field; add, Key refused, change key, Connected', async () => {
  await nav('Providers');
  await page.getByText(/^No providers added yet\./).waitFor();
  const admin = await Admin.signIn(svc.url);
  const refused = await admin.call<{ error: { message: string; param: string } }>('POST', '/providers', { name: 'Bad Name', address: upstream.url });
  assert.is(refused.status, 400);
  await page.getByLabel('Name', { exact: true }).fill('Bad Name');
  await page.getByLabel('Address', { exact: true }).fill(upstream.url);
  await page.getByRole('button', { name: 'Add and check' }).click();
  const nameField = page.getByLabel('Name', { exact: true });
  await page.getByText(refused.body.error.message.replace(/^name: u/, 'U'), { exact: true }).waitFor(); // without the param prefix
  assert.is(await nameField.getAttribute('aria-invalid'), 'true');
  await page.locator('input[name="name"]:focus').waitFor(); // the refused field gets the focus

  await nameField.fill('local');
  await page.getByLabel('API key (optional)').fill('sk-wrong');
  await page.getByRole('button', { name: 'Add and check' }).click();
  const row = page.locator('tr[data-provider="local"]');
  await row.getByText('Key refused').waitFor();
  await page.getByRole('button', { name: 'Change local' }).click();
  await page.getByLabel('New API key').fill(upstreamKey);
  await page.getByRole('button', { name: 'Save and check' }).click();
  await page.getByRole('button', { name: 'Check local' }).click();
  await row.getByText('Connected').waitFor();

  await page.getByLabel('Name', { exact: true }).fill('gone');
  await page.getByLabel('Address', { exact: true }).fill('http://127.0.0.1:9/v1');
  await page.getByRole('button', { name: 'Add and check' }).click();
  await page.locator('tr[data-provider="gone"]').getByText('Could not connect').waitFor();
  await screenshot(page, '02-providers');
  await checkA11y(page, 'providers');
  // Removal asks first: Cancel keeps it, confirming removes it.
  await page.getByRole('button', { name: 'Remove gone' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  assert.is(await page.locator('tr[data-provider="gone"]').count(), 1);
  await page.getByRole('button', { name: 'Remove gone' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove provider' }).click();
  await page.locator('tr[data-provider="gone"]').waitFor({ state: 'detached' });
});

test('models: add with every field and capabilities; an output limit above the context is refused at the field', async () => {
  await nav('Models');
  await page.getByText('No added models yet.').waitFor();
  const form = page.locator('form', { has: page.getByRole('heading', { name: 'Add a model' }) });
  await form.getByLabel('Name', { exact: true }).fill('local:mock-model');
  await form.getByLabel('Display name (optional)').fill('Mock model');
  await form.getByLabel('Context window (tokens)').fill('32768');
  await form.getByLabel('Output limit (tokens)').fill('65536');
  await form.getByLabel('Input price (USD per million tokens)').fill('0.20');
  await form.getByLabel('Output price (USD per million tokens)').fill('0.60');
  await form.getByLabel('Can call tools').check();
  await form.getByLabel('Total (ms)').fill('60000');
  await form.getByRole('button', { name: 'Add model' }).click();
  const limit = form.getByLabel('Output limit (tokens)');
  await form.locator('.field', { has: page.getByLabel('Output limit (tokens)') }).getByText('The output limit (65536) must not exceed the context window (32768).').waitFor();
  assert.is(await limit.getAttribute('aria-invalid'), 'true');
  await limit.fill('4096');
  await form.getByRole('button', { name: 'Add model' }).click();
  await page.getByRole('button', { name: 'Edit local:mock-model' }).waitFor();
  const admin = await Admin.signIn(svc.url);
  const model = await admin.ok<Record<string, unknown>>('GET', `/models/${encodeURIComponent('local:mock-model')}`);
  assert.equal(
    { ...model, created_at: 0, updated_at: 0, input_micro_usd_per_mtok: 0, output_micro_usd_per_mtok: 0 },
    { name: 'local:mock-model', provider: 'local', model_id: 'mock-model', display_name: 'Mock model', context_window: 32768, output_limit: 4096,
      input_price: '0.20', output_price: '0.60', input_micro_usd_per_mtok: 0, output_micro_usd_per_mtok: 0, can_read_images: false, can_read_pdf: false,
      can_call_tools: true, provider_missing: false, deadlines: { total_ms: 60000 }, created_at: 0, updated_at: 0 },
  );
  await screenshot(page, '03-models');
  await checkA11y(page, 'models');
});

test('workspace and key: the key is shown once with a copy button', async () => {
  await nav('Workspaces');
  await page.getByText('No workspaces yet.').waitFor();
  await page.getByLabel('Workspace name').fill('Research');
  await page.getByRole('button', { name: 'Add workspace' }).click();
  await page.getByRole('heading', { level: 1, name: 'Research' }).waitFor();
  await page.getByText('No API keys yet.').waitFor();
  await page.getByLabel('Key name').fill('notebook');
  await page.getByRole('button', { name: 'Create key' }).click();
  apiKey = (await page.getByTestId('new-key').textContent()) ?? '';
  assert.match(apiKey, /^svc_/);
  await page.getByRole('button', { name: 'Copy key' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  assert.is(await page.evaluate<string>('navigator.clipboard.readText()'), apiKey);
  await page.getByRole('cell', { name: 'notebook', exact: true }).waitFor();
  // Routing settings and a route, as in the README's routing example.
  // Models are picked from the workspace's models: a name that is not one cannot be chosen.
  assert.equal(await page.getByLabel('Default model').locator('option').allTextContents(), ['None (requests no route claims are refused)', 'local:mock-model']);
  await page.getByLabel('Default model').selectOption('local:mock-model');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Routing settings saved.').waitFor();
  await page.getByLabel('Route name').fill('code');
  await page.getByLabel('Route model').selectOption('local:mock-model');
  await page.getByLabel('What the route is for').fill('Programming help');
  await page.getByLabel('Example requests (one per line)').fill('Fix this Python error\nWrite a SQL query');
  await page.getByRole('button', { name: 'Add route' }).click();
  await page.getByRole('cell', { name: 'route/code', exact: true }).waitFor();
  // How auto decides: the explain call from the routing page, and where recent decisions show.
  await page.getByLabel('Prompt', { exact: true }).fill('Fix this Python error in my script');
  await page.getByRole('button', { name: 'Explain' }).click();
  await page.getByText('Route scores (student encoder', { exact: false }).waitFor();
  await page.getByText('Decision: route/code', { exact: false }).waitFor();
  await page.getByRole('heading', { name: 'Recent decisions' }).waitFor();
  await screenshot(page, '04-workspace');
  await checkA11y(page, 'workspace');
  await page.reload();
  await page.getByRole('cell', { name: 'notebook', exact: true }).waitFor();
  assert.is(await page.getByTestId('new-key').count(), 0, 'the key is not shown again');
});

test('a chat request with that key appears under Requests with its trace', async () => {
  const client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey, maxRetries: 0 });
  const { data, response } = await client.chat.completions.create({ model: 'local:mock-model', messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
  assert.is(data.choices[0]?.message.content, 'Hello from the mock.');
  requestId = response.headers.get('x-svc-request-id') ?? '';
  assert.ok(requestId);
  await nav('Requests');
  await page.getByLabel('Request id (x-svc-request-id)').fill(requestId);
  const link = page.getByRole('link', { name: requestId });
  for (let i = 0; i < 50 && (await link.count()) === 0; i++) {
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForTimeout(100);
  }
  await screenshot(page, '05-requests');
  await checkA11y(page, 'requests');
  await link.click();
  await page.getByRole('heading', { level: 1, name: `Request ${requestId}` }).waitFor();
  await page.locator('tr[data-phase^="upstream attempt 1"]').waitFor();
  assert.ok((await page.locator('table.timeline tbody tr').count()) >= 3, 'phases and the attempt are on the timeline');
  await page.getByText('local:mock-model').first().waitFor();
  await screenshot(page, '06-trace');
  await checkA11y(page, 'trace');
});

test('the request shows under Usage, by model and by key', async () => {
  await nav('Usage');
  await page.getByRole('img', { name: /^Spend by model/ }).waitFor();
  await page.getByRole('cell', { name: 'local:mock-model', exact: true }).waitFor();
  await screenshot(page, '07-usage');
  await checkA11y(page, 'usage');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
  await page.getByLabel('Spend by', { exact: true }).selectOption('key');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByRole('img', { name: /^Spend by API key/ }).waitFor();
  await page.getByRole('cell', { name: /^notebook \(svc_/ }).waitFor();
});

test('budgets: an instance cap; the amount is checked at its field', async () => {
  await nav('Budgets');
  await page.getByText(/No caps yet/).waitFor();
  await page.getByLabel('Amount (US dollars)').fill('12.5.0');
  await page.getByRole('button', { name: 'Add cap' }).click();
  await page.getByText('Enter an amount in US dollars, e.g. 50 or 12.50 (at most 6 decimals).').waitFor();
  await page.getByLabel('Amount (US dollars)').fill('50');
  await page.getByLabel(/^Alert at/).fill('50, 80');
  await page.getByRole('button', { name: 'Add cap' }).click();
  await page.getByRole('cell', { name: '$50.00', exact: true }).first().waitFor();
  await page.getByText(/No alerts yet/).waitFor();
  await screenshot(page, '08-budgets');
  await checkA11y(page, 'budgets');
});

test('every page fits 390 px and stays accessible; sign out ends the session', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const name of ['Workspaces', 'People', 'Providers', 'Models', 'Budgets', 'Usage', 'Requests', 'Account']) {
    await nav(name);
    await page.waitForLoadState('networkidle');
    await assertFits(page, name);
    await screenshot(page, `mobile-${name.toLowerCase()}`);
  }
  await checkA11y(page, 'account at 390 px');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to svc' }).waitFor();
  assert.is((await context.cookies()).find((c) => c.name === 'svc_session')?.value ?? '', '');
  assert.equal(errors, []);
});

test.run();
