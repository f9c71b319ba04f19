import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe, { type Result } from 'axe-core';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { adminEmail, adminPassword } from '../support/provision.js';

/** Debian's Chromium (scripts/test.sh installs it); Playwright never downloads a browser of its own. */
export const chromiumPath = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Where each run's screenshots go (not committed): SVC_TEST_SCREENSHOTS or the temp folder. */
export const screenshotDir = join(process.env.SVC_TEST_SCREENSHOTS ?? join(tmpdir(), 'svc-admin-ui-screenshots'), shape);

/** One headless Chromium per suite. Playwright adds --headless itself for `headless: true`. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(screenshotDir, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A new context and page at `width` px (a phone's height below 800 px), and its errors. */
export async function pageAt(browser: Browser, width: number): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: width > 800 ? 900 : 844 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  return { page, errors: watchErrors(page) };
}

/** Saves a full-page screenshot named `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

/**
 * axe-core on the page as it is: fails on any serious or critical violation, naming them. axe is
 * injected once per document (the admin UI is one document; its pages are hash routes) and run
 * in it with its default rules, the same rules and context @axe-core/playwright's `analyze()`
 * used; that wrapper injected the 550 KB script three times a call and finished every run in a
 * new blank page, 2.6 s a check on this machine kind against ~0.3 s this way.
 */
export async function checkA11y(page: Page, where: string): Promise<void> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axe.source);
  const violations = await page.evaluate<Result[]>('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)');
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const detail = bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`).join('\n');
  assert.is(bad.length, 0, `${where}: accessibility violations\n${detail}`);
}

/** Fails when the page is wider than the viewport (sideways scrolling of the whole page). */
export async function assertFits(page: Page, where: string): Promise<void> {
  // A string runs in the page (the test compiles without the DOM library).
  // The scrolling element is what the page scrolls by (a table in its own scroll box may be wider).
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>('({ scroll: (document.scrollingElement ?? document.documentElement).scrollWidth, width: window.innerWidth })');
  assert.ok(scroll <= width, `${where}: the page is ${scroll}px wide in a ${width}px viewport`);
}

/** Collects the page's uncaught errors and console errors, so a broken module fails the test. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Failed fetches answer with the API's error on screen; the browser also logs them.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** Follows a link of the main menu and waits for that page's heading. */
export async function navTo(page: Page, name: string): Promise<void> {
  const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  // Below 900 px the sidebar folds behind the Menu button.
  if (!(await link.isVisible())) await page.getByRole('button', { name: 'Menu' }).click();
  await link.click();
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
}

/** A browser with one 1280 px page signed in as the instance admin (on the Home page), and its errors. */
export async function signedInPage(url: string, options: BrowserContextOptions = {}): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${url}/`);
  await page.getByLabel('Email').fill(adminEmail);
  await page.getByLabel('Password').fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  return { browser, page, errors };
}
