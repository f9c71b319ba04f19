import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { Admin, adminEnv } from '../support/provision.js';
import { protectedServer, type Protected } from '../tools/oauth-support.js';
import { assertFits, checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// The two newer kinds of tool server in the browser: a command-line server's form (refused at
// its fields; this instance has no sandbox, so the transport itself is refused), an OAuth server
// signed in through the real authorization server and back to svc's callback, then signed out;
// and the instance admins' egress allow-list.
const test = suite(`admin-ui: tool server kinds (${shape})`);
const secretValue = 'stdio-secret-canary-8d1f';
const clientSecret = 'oauth-client-secret-canary-44ab';
let backing: Backing;
let svc: TestService;
let admin: Admin;
let remote: Protected;
let browser: Browser;
let page: Page;
let errors: string[];
let workspaceId = '';

test.before(async () => {
  backing = await createBacking();
  remote = await protectedServer();
  svc = await startService({ backing, env: adminEnv });
  admin = await Admin.signIn(svc.url);
  workspaceId = await admin.workspace('Research');
  for (const origin of [remote.mcp.origin, remote.as.origin]) await admin.ok('POST', '/tool-origins', { origin });
  ({ browser, page, errors } = await signedInPage(svc.url));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await remote?.mcp.stop();
  await remote?.as.stop();
  await backing?.drop();
});

interface Refusal { error: { message: string; param: string } }
interface ServerView { id: string; name: string; auth: string; sign_in: string | null }
const ws = (path: string) => `/workspaces/${workspaceId}${path}`;
const servers = async () => (await admin.ok<{ data: ServerView[] }>('GET', ws('/tool-servers'))).data;
const fieldOf = (label: string) => page.locator('.field', { has: page.getByLabel(label, { exact: true }) });

async function toolsOfResearch(): Promise<void> {
  await navTo(page, 'Tools');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
}

test('a command-line server: its own fields, refusals at Command, Environment and Transport', async () => {
  await toolsOfResearch();
  await page.getByText(/^No tool servers in this workspace yet\./).waitFor();
  await page.getByLabel('Transport').selectOption('stdio');
  assert.is(await page.getByLabel('Server URL').count(), 0, 'no URL for a command line');
  assert.is(await page.getByLabel('Authentication').count(), 0, 'no authentication for a command line');
  await page.getByLabel('Server name').fill('weather');
  await page.getByLabel('Command', { exact: true }).fill('/usr/bin/node');
  await page.getByLabel('Arguments (one per line)').fill('-y\n@example/weather-mcp');
  await page.getByLabel('Environment (NAME=value per line)', { exact: true }).fill('UNITS=metric');
  await page.getByLabel('Secret environment (NAME=value per line)').fill(`WEATHER_KEY=${secretValue}`);
  const body = { name: 'weather', transport: 'stdio', command: '/usr/bin/node', args: ['-y', '@example/weather-mcp'], env: { UNITS: 'metric' }, secret_env: { WEATHER_KEY: secretValue } };
  const badCommand = await admin.call<Refusal>('POST', ws('/tool-servers'), body);
  assert.equal([badCommand.status, badCommand.body.error.param], [400, 'command']);
  await page.getByRole('button', { name: 'Register server' }).click();
  assert.match(badCommand.body.error.message, /^command: Expected string to match/);
  await fieldOf('Command').getByText('This has characters that are not allowed here; see the hint.', { exact: true }).waitFor(); // never the regex
  await page.locator('input[name="command"]:focus').waitFor();

  // A line that is not NAME=value is refused at its field before anything is sent.
  await page.getByLabel('Command', { exact: true }).fill('npx');
  await page.getByLabel('Environment (NAME=value per line)', { exact: true }).fill('UNITS=metric\nnot a pair');
  await page.getByRole('button', { name: 'Register server' }).click();
  await fieldOf('Environment (NAME=value per line)').getByText(/^Each line is NAME=value/).waitFor();

  // This instance has no sandbox (SVC_SANDBOX_URL): the API refuses the transport itself.
  await page.getByLabel('Environment (NAME=value per line)', { exact: true }).fill('UNITS=metric');
  const noSandbox = await admin.call<Refusal>('POST', ws('/tool-servers'), { ...body, command: 'npx' });
  assert.equal([noSandbox.status, noSandbox.body.error.param], [400, 'transport']);
  assert.match(noSandbox.body.error.message, /sandbox/);
  await page.getByRole('button', { name: 'Register server' }).click();
  await fieldOf('Transport').getByText(noSandbox.body.error.message, { exact: true }).waitFor();
  await page.locator('select[name="transport"]:focus').waitFor();
  assert.equal(await servers(), [], 'nothing was registered');
  await screenshot(page, '16-tools-command-line');
  await checkA11y(page, 'tools: command-line form');
});

test('an OAuth server: registered, signed in through the authorization server, its tools listed', async () => {
  await toolsOfResearch();
  await page.getByLabel('Transport').selectOption('streamable-http');
  assert.is(await page.getByLabel('Command', { exact: true }).count(), 0, 'no command for a remote server');
  await page.getByLabel('Server name').fill('drive');
  await page.getByLabel('Server URL').fill(remote.mcp.url);
  await page.getByLabel('Authentication').selectOption('oauth');
  assert.is(await page.getByLabel('Bearer token', { exact: true }).count(), 0, 'OAuth takes no bearer token');
  // A client secret without its client id is refused at the secret's field.
  await page.getByLabel('OAuth client secret (optional)').fill(clientSecret);
  await page.getByRole('button', { name: 'Register server' }).click();
  const refused = await admin.call<Refusal>('POST', ws('/tool-servers'), { name: 'drive', url: remote.mcp.url, auth: 'oauth', oauth_client_secret: clientSecret });
  assert.equal([refused.status, refused.body.error.param], [400, 'oauth_client_secret']);
  await fieldOf('OAuth client secret (optional)').getByText(refused.body.error.message, { exact: true }).waitFor();
  await page.getByLabel('OAuth client secret (optional)').fill('');
  await page.getByLabel('OAuth scope (optional)').fill('tools');
  await page.getByRole('button', { name: 'Register server' }).click();

  const row = page.locator('tr[data-server="drive"]');
  await row.getByText('not signed in', { exact: true }).waitFor();
  assert.is(await row.locator('td').nth(1).textContent(), 'Streamable HTTP');
  assert.is(await row.locator('td').nth(2).textContent(), remote.mcp.url);
  await page.getByText(/^svc is not signed in to drive:\s+an admin of this workspace signs in/).waitFor();
  assert.is(await page.getByRole('button', { name: 'Refresh tools of drive' }).count(), 0, 'nothing to list before the sign-in');
  assert.is(await row.getByRole('button', { name: 'Sign out of drive' }).count(), 0, 'nothing to sign out of yet');
  assert.equal((await servers()).map((s) => [s.name, s.auth, s.sign_in]), [['drive', 'oauth', 'not_signed_in']]);
  await screenshot(page, '17-tools-oauth-registered');
  await checkA11y(page, 'tools: OAuth server not signed in');

  // The browser goes to the authorization server, which approves at once and returns it to svc's callback.
  await row.getByRole('button', { name: 'Sign in to drive' }).click();
  await page.getByRole('heading', { level: 1, name: 'Signed in' }).waitFor();
  assert.ok(page.url().startsWith(`${svc.url}/admin/v1/tool-sign-in/callback?`), page.url());
  assert.match((await page.locator('body').textContent()) ?? '', 'svc can now use the tool server drive.');
  assert.is(remote.as.authorizeQueries.length, 1, 'one trip through the authorization endpoint');
  await page.getByRole('link', { name: 'svc' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  await toolsOfResearch();
  await row.getByText('signed in', { exact: true }).waitFor();
  assert.equal((await servers()).map((s) => s.sign_in), ['signed_in']);
  await page.getByRole('button', { name: 'Tools of drive' }).click();
  await page.locator('tr[data-tool="whoami"]').getByText('drive__whoami').waitFor();
  const html = await page.content();
  for (const secret of [clientSecret, ...remote.as.issued]) assert.not.ok(html.includes(secret), 'no secret or token on the page');
  await screenshot(page, '18-tools-oauth-signed-in');
  await checkA11y(page, 'tools: OAuth server signed in');
});

test('signing out asks first, then svc forgets the sign-in', async () => {
  const row = page.locator('tr[data-server="drive"]');
  await row.getByRole('button', { name: 'Sign out of drive' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  assert.equal((await servers()).map((s) => s.sign_in), ['signed_in']);
  await row.getByRole('button', { name: 'Sign out of drive' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Sign out' }).click();
  await row.getByText('not signed in', { exact: true }).waitFor();
  assert.equal((await servers()).map((s) => s.sign_in), ['not_signed_in']);
  await page.getByText(/^svc is not signed in to drive/).waitFor();
});

test('egress allow-list: added (host lower-cased), a bad port refused at its field, removed after confirming', async () => {
  const section = page.locator('section', { has: page.getByRole('heading', { name: 'Egress allow-list (whole instance)' }) });
  await section.getByText(/^Command-line tool servers run in the sandbox and can reach only these hosts and ports/).waitFor();
  await section.getByText(/^No hosts allowed/).waitFor();
  await section.getByText(/^No egress proxy is set up for svc/).waitFor();
  const bad = await admin.call<Refusal>('POST', '/egress-allow-list', { host: 'registry.npmjs.org', port: 70000 });
  assert.equal([bad.status, bad.body.error.param], [400, 'port']);
  await page.getByLabel('Host to allow').fill('Registry.NPMjs.org');
  await page.getByLabel('Port', { exact: true }).fill('70000');
  await page.getByRole('button', { name: 'Allow host' }).click();
  await fieldOf('Port').getByText('Enter a number of at most 65535.', { exact: true }).waitFor(); // the API's schema wording, in words
  await page.getByLabel('Port', { exact: true }).fill('443');
  await page.getByRole('button', { name: 'Allow host' }).click();
  const entry = section.locator('tr[data-egress="registry.npmjs.org:443"]');
  await entry.getByText('refused', { exact: true }).waitFor();
  const listed = await admin.ok<{ data: unknown[]; push: string }>('GET', '/egress-allow-list');
  assert.equal(listed, { data: [{ host: 'registry.npmjs.org', port: 443, allow_private: false }], push: 'not_configured' });
  await screenshot(page, '19-tools-egress');
  await checkA11y(page, 'tools: egress allow-list');
  await entry.getByRole('button', { name: 'Stop allowing registry.npmjs.org:443' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  assert.is((await admin.ok<{ data: unknown[] }>('GET', '/egress-allow-list')).data.length, 1);
  await entry.getByRole('button', { name: 'Stop allowing registry.npmjs.org:443' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Stop allowing' }).click();
  await section.getByText(/^No hosts allowed/).waitFor();
  assert.is((await admin.ok<{ data: unknown[] }>('GET', '/egress-allow-list')).data.length, 0);
});

test('the Tools page with both kinds fits 390 px and stays accessible; no page error', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await toolsOfResearch();
  await page.locator('tr[data-server="drive"]').getByText('not signed in', { exact: true }).waitFor();
  await page.getByLabel('Transport').selectOption('stdio');
  await page.waitForLoadState('networkidle');
  await assertFits(page, 'Tools at 390 px');
  await screenshot(page, 'mobile-tools-kinds');
  await checkA11y(page, 'Tools (kinds) at 390 px');
  assert.equal(errors, []);
});

test.run();
