import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { MockUpstream } from '../support/mock-upstream.js';
import { adminEmail, adminPassword, startWorld, type World } from '../support/provision.js';
import * as assert from 'uvu/assert';
import { assertFits, checkA11y, launchBrowser, screenshot, watchErrors } from './browser.js';

/** The models of the chat suites: the workspace's default, a code route's model, one that reads no images. */
export const models = { general: 'local:general-v1', coder: 'local:coder-v1', blind: 'local:blind-v1' } as const;

export interface ChatUiWorld extends World {
  mock: MockUpstream;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors and console errors, for a final `assert.equal(errors, [])`. */
  errors: string[];
  /** Every POST /v1/chat/completions the page sent, in order. */
  sent: Request[];
  /** Admin API call under /admin/v1/workspaces/<this workspace>. */
  ws<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
}

/**
 * A service with routing (classifier off: signals and the default decide), a `code` route and a
 * default model on the mock upstream; a browser signed in as the first admin on the Chat page.
 */
export async function startChatUi(plugins: Record<string, unknown> = {}): Promise<ChatUiWorld> {
  const mock = await new MockUpstream().start();
  const world = await startWorld({
    plugins: {
      routing: { config: { classifier: { enabled: false } } },
      conversations: { config: { flushIntervalMs: 20 } },
      tracing: { config: { flushIntervalMs: 50 } },
      ...plugins,
    },
  });
  await world.admin.provider('local', mock.url);
  await world.admin.model(models.general);
  await world.admin.model(models.coder);
  await world.admin.model(models.blind, { can_read_images: false, can_read_pdf: false });
  const ws = <T = any>(method: string, path: string, body?: unknown) => world.admin.call<T>(method, `/workspaces/${world.workspaceId}${path}`, body);
  await ws('POST', '/routes', { name: 'code', model: models.coder, description: 'Programming help' });
  await ws('PATCH', '/routing', { default_model: models.general, code_route: 'code' });

  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const errors = watchErrors(page);
  const sent: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/v1/chat/completions')) sent.push(r);
  });
  await page.goto(`${world.svc.url}/`);
  await page.getByLabel('Email').fill(adminEmail);
  await page.getByLabel('Password').fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  return {
    ...world, mock, browser, context, page, errors, sent, ws,
    stop: async () => {
      await browser.close();
      await world.stop();
      await mock.stop();
    },
  };
}

/** Types a message into the composer and sends it with the Send button. */
export async function say(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** The last reply on the page. */
export const lastReply = (page: Page) => page.getByRole('article', { name: 'Reply' }).last();

/** Waits until the last reply is complete (not streaming any more). */
export async function replyDone(page: Page): Promise<void> {
  await page.locator('article.reply[aria-busy="false"]').last().waitFor();
  await page.getByRole('button', { name: 'Send' }).waitFor();
}

/** Polls `check` every 50 ms for up to `ms`. */
export async function until(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await check()) return true;
  return check();
}

/** The end of a chat suite: at 390 px the page fits, is saved as `mobile-<name>`, passes axe; no page error was logged. */
export async function finishAtPhoneWidth(w: ChatUiWorld, name: string): Promise<void> {
  await w.page.setViewportSize({ width: 390, height: 844 });
  await assertFits(w.page, `${name} at 390 px`);
  await screenshot(w.page, `mobile-${name}`);
  await checkA11y(w.page, `${name} at 390 px`);
  assert.equal(w.errors, []);
}
