import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEmail, adminEnv, adminPassword } from '../support/provision.js';
import { DAY, insert, span } from '../retention/support.js';
import { bundleFiles, unpack } from '../diagnostics/unpack.js';
import { assertFits, checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// The instance admin's operations pages in the browser: retention periods (a refused one at its
// field), Run now with its counts, where traces go, a workspace's recording, and the diagnostics
// bundle downloaded as a file.
const test = suite(`admin-ui: retention and diagnostics (${shape})`);
let backing: Backing;
let svc: TestService;
let admin: Admin;
let browser: Browser;
let page: Page;
let errors: string[];
let workspaceId = '';
const otlpSecret = 'otlp-header-canary-5d21';
const otlpToken = 'otlp-path-canary-77b0';

test.before(async () => {
  backing = await createBacking();
  svc = await startService({
    backing,
    // The collector is a closed port: export fails quietly, and the page may name its host only.
    env: { ...adminEnv, SVC_OTLP_ENDPOINT: `http://127.0.0.1:9/v1/traces?token=${otlpToken}`, SVC_OTLP_HEADERS: `authorization=Bearer ${otlpSecret}` },
    overrides: { plugins: { retention: { config: { schedule: '' } } } },
  });
  admin = await Admin.signIn(svc.url);
  workspaceId = await admin.workspace('Research');
  // Three request traces past the default 30 days, for Run now to delete.
  for (const id of ['old1', 'old2', 'old3']) await insert(svc, 'spans', span(id, Date.now() - 40 * DAY));
  ({ browser, page, errors } = await signedInPage(svc.url, { acceptDownloads: true }));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await backing?.drop();
});

interface View { kinds: Array<{ kind: string; days: unknown }>; last_run: { counts: Record<string, number> } | null }

test('retention: a period out of range is refused at its field; a good one is saved', async () => {
  await navTo(page, 'Retention');
  const refused = await admin.call<{ error: { message: string; param: string } }>('PUT', '/retention/periods', { periods: { spans: 0 } });
  assert.equal([refused.status, refused.body.error.param], [400, 'periods.spans']);
  const spans = page.getByLabel('Request traces (spans) (days)');
  assert.is(await spans.inputValue(), '30');
  await spans.fill('0');
  await page.getByRole('button', { name: 'Save periods' }).click();
  await page.locator('.field', { has: spans }).getByText('Enter a number.', { exact: true }).waitFor(); // not the schema's wording
  assert.is(await spans.getAttribute('aria-invalid'), 'true');
  await page.locator('input[name="periods_spans"]:focus').waitFor();
  await spans.fill('14');
  await page.getByLabel('Tool call records (days)').fill('120');
  await page.getByRole('button', { name: 'Save periods' }).click();
  await page.getByText('Saved 2 periods; the next run uses them.').waitFor();
  const view = await admin.ok<View>('GET', '/retention');
  const days = Object.fromEntries(view.kinds.map((k) => [k.kind, k.days]));
  assert.equal([days.spans, days.tool_calls, days.budget_holds], [14, 120, 30]);
});

test('where traces go: the OTLP host, never its headers or the rest of the address', async () => {
  const text = (await page.getByTestId('trace-export').textContent()) ?? '';
  assert.match(text, /^Traces leave this instance: one span per request is sent over OTLP to 127\.0\.0\.1:9 /);
  const html = await page.content();
  assert.not.ok(html.includes(otlpSecret) || html.includes(otlpToken), 'no OTLP secret on the page');
});

test('Run now deletes what is past its period and shows the counts per kind', async () => {
  await page.getByText(/^No run yet\./).waitFor();
  await page.getByRole('button', { name: 'Run now' }).click();
  await page.getByText('Run finished: 3 records deleted.').waitFor();
  const row = page.locator('tr[data-kind="spans"]');
  assert.is(await row.locator('td').nth(1).textContent(), '3');
  assert.is(await page.locator('tr[data-kind="usage_records"] td').nth(1).textContent(), '0');
  const view = await admin.ok<View>('GET', '/retention');
  assert.is(view.last_run?.counts.spans, 3);
  assert.is(await page.getByText(/^Last run .* \(Run now\): done in \d+ ms\.$/).count(), 1);
  await screenshot(page, '10-retention');
  await checkA11y(page, 'retention');
});

test("a workspace's recording: days out of range refused at the field; on for 14 days", async () => {
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
  const record = page.getByLabel('Record prompts and replies in this workspace');
  await record.waitFor();
  assert.is(await record.isChecked(), false);
  const refused = await admin.call<{ error: { message: string } }>('PUT', `/workspaces/${workspaceId}/recording`, { enabled: true, days: 91 });
  assert.is(refused.status, 400);
  await record.check();
  await page.getByLabel('Days kept (1 to 90)').fill('91');
  await page.getByRole('button', { name: 'Save recording' }).click();
  await page.locator('.field', { has: page.getByLabel('Days kept (1 to 90)') }).getByText('Enter a number of at most 90.', { exact: true }).waitFor();
  await page.getByLabel('Days kept (1 to 90)').fill('14');
  await page.getByRole('button', { name: 'Save recording' }).click();
  await page.getByText('Recording settings saved.').waitFor();
  assert.equal(await admin.ok('GET', `/workspaces/${workspaceId}/recording`), { enabled: true, days: 14 });
});

test('diagnostics: the download is the gzip tar of the admin API, with sandbox.json and no secret', async () => {
  await navTo(page, 'Diagnostics');
  await page.getByText(/^It never holds/).waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download diagnostics bundle' }).click()]);
  assert.match(download.suggestedFilename(), /^svc-diagnostics-\d{4}-\d{2}-\d{2}T[\d-]+Z\.tar\.gz$/);
  const data = readFileSync((await download.path())!);
  assert.equal([data[0], data[1]], [0x1f, 0x8b], 'gzip');
  const files = await unpack(data);
  assert.equal([...files.keys()].sort(), bundleFiles);
  assert.ok(JSON.parse(files.get('sandbox.json')!));
  const all = [...files.values()].join('\n');
  for (const secret of [otlpSecret, otlpToken, adminEmail, adminPassword]) assert.not.ok(all.includes(secret), `the bundle holds ${secret}`);
  await page.getByText(/^Downloaded svc-diagnostics-.*\.tar\.gz \(\d+ KB\)\.$/).waitFor();
  await screenshot(page, '11-diagnostics');
  await checkA11y(page, 'diagnostics');
});

test('both pages fit 390 px and stay accessible; no page error', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const name of ['Retention', 'Diagnostics']) {
    await navTo(page, name);
    await page.waitForLoadState('networkidle');
    await assertFits(page, name);
    await screenshot(page, `mobile-${name.toLowerCase()}`);
    await checkA11y(page, `${name} at 390 px`);
  }
  assert.equal(errors, []);
});

test.run();
