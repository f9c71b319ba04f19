import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import * as assert from 'uvu/assert';
import type { Backing } from '../support/harness.js';
import { backingEnv, cleanEnv, cliPath, repoRoot, tempDir } from '../kernel/fixtures/cli.js';
import { assertFits, checkA11y, navTo, screenshot } from './browser.js';

export const adminEmail = 'admin@example.com';
export const adminPassword = 'a long admin password';

/** README step 1 as written: the first instance admin from the command line (the real binary). */
export function createAdminWithCli(backing: Backing): void {
  const dir = tempDir();
  writeFileSync(join(dir, 'pw'), adminPassword);
  const r = spawnSync(process.execPath, [cliPath, 'admin', 'create-admin', '--email', adminEmail, '--password-file', join(dir, 'pw')], {
    cwd: repoRoot, env: cleanEnv({ ...backingEnv(backing), SVC_LOG_LEVEL: 'silent' }), encoding: 'utf8', timeout: 60_000,
  });
  assert.is(r.status, 0, r.stderr);
}

/** Signs in on the sign-in page and waits for the landing page's heading. */
export async function signIn(page: Page, url: string, email: string, password: string, landing: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: landing, exact: true }).waitFor();
}

/** Opens a menu page, lets it load, checks it fits the width and has no serious axe violation, saves a screenshot. */
export async function visit(page: Page, name: string, shot: string): Promise<void> {
  await navTo(page, name);
  await page.waitForLoadState('networkidle');
  await page.locator('.loading').first().waitFor({ state: 'detached' }).catch(() => {});
  await assertFits(page, `${shot} (${name})`);
  await checkA11y(page, `${shot} (${name})`);
  await screenshot(page, shot);
}

/** The sidebar's area names and link names, in order. */
export async function menuOf(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Main' }).locator('.area-name, a').allTextContents();
}
