import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser } from 'playwright-core';
import { checkA11y, launchBrowser, pageAt } from './browser.js';
import { shape } from '../support/harness.js';

// The accessibility check every admin-UI suite relies on must fail on a real violation: a page
// with an image without alternative text and a button without a name fails it, naming both rules;
// the same page with them mended passes, also when checked again in the same document.
const test = suite(`admin-ui: the accessibility check itself (${shape})`);
let browser: Browser;

test.before(async () => {
  browser = await launchBrowser();
});
test.after(async () => {
  await browser?.close();
});

const html = (body: string) => `<!doctype html><html lang="en"><head><title>a11y</title></head><body><main><h1>Check</h1>${body}</main></body></html>`;

test('serious and critical violations fail the check and are named; a mended page passes', async () => {
  const { page: p } = await pageAt(browser, 1280);
  await p.setContent(html('<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10"><button></button>'));
  const err = await checkA11y(p, 'broken page').then(() => undefined, (e: Error) => e);
  assert.ok(err, 'the check failed');
  assert.match(err!.message, 'broken page: accessibility violations');
  assert.match(err!.message, 'image-alt (critical)');
  assert.match(err!.message, 'button-name (critical)');
  // Mended in the same document: axe is already injected and runs again on the page as it is now.
  await p.evaluate("document.querySelector('img').alt = 'a dot'; document.querySelector('button').textContent = 'Save'");
  await checkA11y(p, 'mended page');
  await p.context().close();
});

test.run();
