import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { shape } from '../support/harness.js';
import { repoRoot } from '../kernel/fixtures/cli.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, adminEmail, adminPassword, startWorld, type World } from '../support/provision.js';
import { assertFits, checkA11y, launchBrowser, navTo, pageAt, screenshot } from './browser.js';
import { menuOf, signIn, visit } from './walkthrough-support.js';

// Issue 28 "Done when": every page as an admin and as a member, at 1440 px and 390 px: it fits
// the width (no sideways scrolling of the page), axe finds no serious or critical violation, and a
// screenshot is written (browser.ts: $SVC_TEST_SCREENSHOTS or <tmp>/svc-admin-ui-screenshots/<shape>).
// The member lands on Chat, sees only their pages and has My usage (room under each cap, their
// requests, their keys).
const test = suite(`admin-ui: every page at 1440 and 390 px, admin and member (${shape})`);
let w: World;
let upstream: MockUpstream;
let browser: Browser;
const model = 'local:mock-model';
const member = { email: 'mia@example.test', password: 'a long member password' };
const widths = [1440, 390] as const;
const adminPages = ['Home', 'Chat', 'My usage', 'Workspaces', 'Budgets', 'Usage', 'Requests', 'Recorded prompts', 'Tools', 'Providers', 'Models', 'Catalogue feed', 'People', 'Single sign-on', 'Audit log', 'Retention', 'Diagnostics', 'Conversations', 'Account'];
const memberPages = ['Chat', 'My usage', 'Workspaces', 'Conversations', 'Account'];
const slug = (s: string) => s.toLowerCase().replace(/\W+/g, '-');

test('the lists above are every page of the menu (plugins/admin-ui/web/pages/index.js)', () => {
  const index = readFileSync(join(repoRoot, 'plugins/admin-ui/web/pages/index.js'), 'utf8');
  const titles = [...index.matchAll(/\{ path: '[^']+', title: '([^']+)'/g)].map((m) => m[1]);
  const everyone = [...index.matchAll(/\{ path: '[^']+', title: '([^']+)'[^}]*roles: everyone/g)].map((m) => m[1]);
  assert.equal([...titles].sort(), [...adminPages].sort());
  assert.equal([...everyone].sort(), [...memberPages].sort());
});

test.before(async () => {
  upstream = await new MockUpstream().start();
  w = await startWorld({ plugins: { tracing: { config: { flushIntervalMs: 50 } } } });
  await w.admin.provider('local', upstream.url);
  await w.admin.model(model, { input_price: '1.00', output_price: '2.00' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/routes`, { name: 'code', model, description: 'Programming help' });
  await w.admin.ok('PATCH', `/workspaces/${w.workspaceId}/routing`, { default_model: model });
  await w.admin.ok('PUT', `/workspaces/${w.workspaceId}/recording`, { enabled: true, days: 7 });
  const mia = await w.admin.ok<{ id: string }>('POST', '/persons', { ...member, name: 'Mia' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/members`, { email: member.email, role: 'member' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'member', person_id: mia.id, amount_micro_usd: 5_000_000, period: 'month' });
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/budget-caps`, { scope: 'workspace', amount_micro_usd: 50_000_000, period: 'month' });
  const miaKey = (await (await Admin.signIn(w.svc.url, member.email, member.password)).ok<{ key: string }>('POST', `/workspaces/${w.workspaceId}/keys`, { name: 'mia laptop' })).key;
  for (const [key, m] of [[w.apiKey, 'route/code'], [w.apiKey, model], [miaKey, model], [miaKey, 'auto']] as const) {
    await new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: m, messages: [{ role: 'user', content: 'Write a haiku about tests' }] });
  }
  await w.svc.service.get(TracingFlushToken)();
  browser = await launchBrowser();
});
test.after(async () => {
  await browser?.close();
  await w?.stop();
  await upstream?.stop();
});

const open = (width: number) => pageAt(browser, width);

for (const width of widths) {
  test(`admin at ${width} px: every page fits, is accessible and is saved as a screenshot`, async () => {
    const { page, errors } = await open(width);
    // The sign-in page, the one page everybody sees first.
    await page.goto(`${w.svc.url}/`);
    await page.getByRole('heading', { name: 'First time here?' }).waitFor();
    await assertFits(page, 'sign-in page');
    await checkA11y(page, 'sign-in page');
    await screenshot(page, `sign-in-${width}`);
    await signIn(page, w.svc.url, adminEmail, adminPassword, 'Home');
    for (const name of adminPages) await visit(page, name, `admin-${width}-${slug(name)}`);
    // Pages reached from others: a workspace, a trace, a recorded prompt.
    await navTo(page, 'Workspaces');
    await page.getByRole('table', { name: 'Workspaces' }).getByRole('link').first().click();
    await page.getByRole('heading', { level: 2, name: 'Routing', exact: true }).waitFor();
    // Its sections load one by one; measure once the last (recent routing decisions, the auto request's) is there.
    await page.getByText(/^Fell to the default model/).first().waitFor();
    await page.locator('.loading').first().waitFor({ state: 'detached' });
    await assertFits(page, 'workspace page');
    await checkA11y(page, 'workspace page');
    await screenshot(page, `admin-${width}-workspace`);
    await navTo(page, 'Requests');
    await page.locator('table.requests tbody tr').first().getByRole('link').click();
    await page.getByRole('heading', { level: 2, name: 'Who and why' }).waitFor();
    await assertFits(page, 'trace');
    await checkA11y(page, 'trace');
    await screenshot(page, `admin-${width}-trace`);
    await navTo(page, 'Recorded prompts');
    await page.getByRole('cell', { name: 'Write a haiku about tests' }).first().waitFor();
    await page.getByRole('table', { name: 'Recorded requests' }).getByRole('link').first().click();
    await page.getByRole('heading', { level: 2, name: 'Reply' }).waitFor();
    await page.getByText('Write a haiku about tests').first().waitFor();
    await assertFits(page, 'recorded prompt');
    await checkA11y(page, 'recorded prompt');
    await screenshot(page, `admin-${width}-recorded-prompt`);
    assert.equal(errors, []);
    await page.context().close();
  });
}

for (const width of widths) {
  test(`member at ${width} px: lands on Chat, sees only their pages, My usage shows the room under each cap`, async () => {
    const { page, errors } = await open(width);
    await signIn(page, w.svc.url, member.email, member.password, 'Chat');
    await assertFits(page, 'member chat');
    if (width < 900) await page.getByRole('button', { name: 'Menu' }).click();
    assert.equal(await menuOf(page), ['Overview', 'Chat', 'My usage', 'Workspaces', 'Workspaces', 'You', 'Conversations', 'Account']);
    if (width < 900) await page.getByRole('button', { name: 'Menu' }).click();
    await page.goto(`${w.svc.url}/#/budgets`);
    await page.getByRole('heading', { level: 1, name: 'Chat' }).waitFor(); // an admin page is not there for them
    for (const name of memberPages) await visit(page, name, `member-${width}-${slug(name)}`);
    await navTo(page, 'My usage');
    await page.getByText('You can spend').waitFor();
    await page.getByText('You in this workspace, per month').waitFor();
    await page.getByText('This workspace, per month', { exact: true }).waitFor();
    const requests = page.getByRole('region', { name: 'Your requests' });
    assert.is(await requests.locator('tbody tr').count(), 2, 'only their own two requests');
    await page.getByRole('region', { name: 'Your API keys' }).getByRole('cell', { name: 'mia laptop', exact: true }).waitFor();
    await requests.getByRole('link').first().click();
    await page.getByRole('heading', { level: 2, name: 'Who and why' }).waitFor();
    await assertFits(page, 'member trace');
    await checkA11y(page, 'member trace');
    await screenshot(page, `member-${width}-my-request`);
    assert.equal(errors, []);
    await page.context().close();
  });
}

test.run();
