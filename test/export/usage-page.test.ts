import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { budgetPlugins, client, eventually, newKey, provision, startInstance, type Instance } from '../budgets/support.js';
import { checkA11y, navTo, signedInPage } from '../admin-ui/browser.js';
import { csvObjects, fetchExport, jsonLines, sums } from './support.js';

/** The Usage page's export in Chromium: the link downloads what the admin API exports, for the period shown. */
const test = suite(`export: the Usage page's download (${shape})`);
let backing: Backing;
let svc: Instance;
let mock: MockUpstream;
let browser: Browser;
let page: Page;
let errors: string[];
let today: string;

/**
 * The page's period ends today (UTC): a suite that straddled midnight named the file for the new
 * day after the test had taken the old one. Starts clear of midnight (two minutes at least).
 */
async function clearOfMidnight(): Promise<void> {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < 120_000) await new Promise((r) => setTimeout(r, left + 1000));
}

test.before(async () => {
  await clearOfMidnight();
  today = new Date().toISOString().slice(0, 10);
  backing = await createBacking();
  mock = await new MockUpstream().start();
  svc = await startInstance(backing, { plugins: { ...budgetPlugins(), 'admin-ui': {} } });
  await provision(svc.admin, mock, { big: { input: '3.33', output: '17.77' }, small: { input: '0.07', output: '0.29' } });
  const ws = await svc.admin.workspace('Finance');
  const key = await newKey(svc.admin, ws);
  for (const [model, pt, ct] of [['mock:big', 1234, 321], ['mock:small', 777, 555], ['mock:big', 10, 20]] as const) {
    mock.enqueue({ reply: { content: 'x', usage: { prompt_tokens: pt, completion_tokens: ct } } });
    await client(svc, key.value).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 600 });
  }
  await eventually(svc, async () => {
    assert.is((await svc.admin.ok<{ total: { requests: number } }>('GET', '/spend')).total.requests, 3);
  });
  ({ browser, page, errors } = await signedInPage(svc.url, { acceptDownloads: true }));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await mock?.stop();
  await backing?.drop();
});

/** Clicks Download and returns the file the browser saved, with its suggested name. */
async function download(): Promise<{ name: string; text: string }> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
  return { name: d.suggestedFilename(), text: await readFile((await d.path())!, 'utf8') };
}

test('the Usage page downloads the period as CSV per request, and as JSON lines per day filtered by model', async () => {
  await navTo(page, 'Usage');
  await page.getByRole('heading', { name: /^Export / }).waitFor();
  await checkA11y(page, 'usage export');
  const csv = await download();
  const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  assert.is(csv.name, `svc-usage-${from}-to-${today}-request.csv`);
  const api = await fetchExport(svc.url, svc.admin.token, `/spend/export?from=${from}&to=${today}`);
  assert.is(csv.text, api.text, 'the file is what the admin API exports');
  const page30 = await svc.admin.ok<{ total: ReturnType<typeof sums> }>('GET', `/spend?from=${from}&to=${today}`);
  assert.equal(sums(csvObjects(csv.text)), page30.total, "the file's sums are the page's total");

  await page.getByLabel('Format').selectOption('jsonl');
  await page.getByLabel('Rows').selectOption('day');
  await page.getByLabel('Model (optional)').fill('mock:big');
  const jsonl = await download();
  assert.is(jsonl.name, `svc-usage-${from}-to-${today}-day.jsonl`);
  const rows = jsonLines(jsonl.text);
  assert.equal(rows.map((r) => [r.date, r.model, r.requests, r.prompt_tokens]), [[today, 'mock:big', 2, 1244]]);
  const big = await svc.admin.ok<{ total: ReturnType<typeof sums> }>('GET', `/spend?from=${from}&to=${today}&model=mock:big`);
  assert.equal(sums(rows, 'requests'), big.total);
  assert.equal(errors, []);
});

test.run();
