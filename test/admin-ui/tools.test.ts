import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { ConversationsFlushToken } from '../../plugins/conversations/index.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { createBacking, shape, startService, type Backing, type TestService } from '../support/harness.js';
import { McpTestServer } from '../support/mcp-server.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, adminEnv } from '../support/provision.js';
import { call } from '../tools/support.js';
import { assertFits, checkA11y, navTo, screenshot, signedInPage } from './browser.js';

// Tools and conversations in the browser: a workspace admin registers a real MCP server, an
// instance admin allows its origin, a tool is toggled; a conversation request through the
// official client calls a tool, whose record links to the trace; the conversation is read and deleted.
const test = suite(`admin-ui: tools and conversations (${shape})`);
const model = 'local:tools-v1';
const bearer = 'tool-bearer-canary-31c9';
let backing: Backing;
let svc: TestService;
let mock: MockUpstream;
let mcp: McpTestServer;
let admin: Admin;
let browser: Browser;
let page: Page;
let errors: string[];
let workspaceId = '';
let apiKey = '';
let requestId = '';

test.before(async () => {
  backing = await createBacking();
  mock = await new MockUpstream().start();
  mcp = await new McpTestServer().start();
  svc = await startService({ backing, env: adminEnv, overrides: { plugins: { conversations: { config: { flushIntervalMs: 20 } }, tracing: { config: { flushIntervalMs: 50 } } } } });
  admin = await Admin.signIn(svc.url);
  await admin.provider('local', mock.url);
  await admin.model(model);
  workspaceId = await admin.workspace('Research');
  apiKey = await admin.key(workspaceId);
  await admin.ok('PATCH', `/workspaces/${workspaceId}/routing`, { default_model: model });
  ({ browser, page, errors } = await signedInPage(svc.url));
});
test.after(async () => {
  await browser?.close();
  await svc?.stop();
  await mcp?.stop();
  await mock?.stop();
  await backing?.drop();
});

const ws = (path: string) => `/workspaces/${workspaceId}${path}`;
interface Tool { name: string; enabled: boolean; needs_approval: boolean }

test('register a tool server: a bad URL is refused at its field; the token is never shown; origin not allowed yet', async () => {
  await navTo(page, 'Tools');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
  await page.getByText(/^No tool servers in this workspace yet\./).waitFor();
  const refused = await admin.call<{ error: { message: string; param: string } }>('POST', ws('/tool-servers'), { name: 'x', url: 'ftp://tools.example' });
  assert.equal([refused.status, refused.body.error.param], [400, 'url']);
  await page.getByLabel('Transport').selectOption('streamable-http');
  await page.getByLabel('Server name').fill('files');
  await page.getByLabel('Server URL').fill('ftp://tools.example');
  await page.getByRole('button', { name: 'Register server' }).click();
  await page.locator('.field', { has: page.getByLabel('Server URL') }).getByText(refused.body.error.message, { exact: true }).waitFor();
  await page.locator('input[name="url"]:focus').waitFor();
  await page.getByLabel('Server URL').fill(mcp.url);
  await page.getByLabel('Authentication').selectOption('bearer');
  await page.getByLabel('Bearer token', { exact: true }).fill(bearer);
  await page.getByRole('button', { name: 'Register server' }).click();
  const row = page.locator('tr[data-server="files"]');
  await row.getByText('not allowed').waitFor();
  assert.is(await row.locator('td').nth(3).textContent(), 'Bearer token');
  await page.getByRole('heading', { name: 'Tools of files' }).waitFor();
  await page.getByText(/^No tools known for this server yet\. They are listed once its origin is allowed\./).waitFor();
  assert.not.ok((await page.content()).includes(bearer), 'the bearer token is not on the page');
  assert.is(await page.getByLabel('Authentication').inputValue(), 'none', 'the form starts again');
  assert.is(await page.getByLabel('Bearer token', { exact: true }).count(), 0, 'the form forgets the token');
});

test('an instance admin allows the origin; the tools are listed and toggled', async () => {
  await page.getByText(/^No origins allowed yet/).waitFor();
  await page.getByLabel('Origin to allow').fill(mcp.origin);
  await page.getByRole('button', { name: 'Allow origin' }).click();
  await page.locator('tr[data-server="files"]').getByText('allowed', { exact: true }).waitFor();
  assert.equal((await admin.ok<{ data: string[] }>('GET', '/tool-origins')).data, [mcp.origin]);
  await page.getByRole('button', { name: 'Refresh tools of files' }).click();
  await page.locator('tr[data-tool="delete_item"]').waitFor();
  const serverId = (await admin.ok<{ data: Array<{ id: string }> }>('GET', ws('/tool-servers'))).data[0]!.id;
  const tools = async () => Object.fromEntries((await admin.ok<{ data: Tool[] }>('GET', ws(`/tool-servers/${serverId}/tools`))).data.map((t) => [t.name, [t.enabled, t.needs_approval]]));
  assert.equal((await tools()).delete_item, [true, true], 'no read-only hint: needs approval');
  assert.is(await page.getByRole('checkbox', { name: 'delete_item needs approval' }).isChecked(), true);
  await page.getByRole('checkbox', { name: 'echo enabled' }).uncheck();
  await page.getByRole('checkbox', { name: 'lookup needs approval' }).check();
  for (let i = 0; i < 50 && (await tools()).lookup![1] !== true; i++) await page.waitForTimeout(50);
  assert.equal([(await tools()).echo, (await tools()).lookup], [[false, false], [true, true]]);
  await page.getByRole('checkbox', { name: 'lookup needs approval' }).uncheck();
  for (let i = 0; i < 50 && (await tools()).lookup![1] !== false; i++) await page.waitForTimeout(50);
  assert.equal((await tools()).lookup, [true, false]);
  await screenshot(page, '12-tools');
  await checkA11y(page, 'tools');
});

test("a conversation request's tool call is recorded and links to the request's trace", async () => {
  const asKey = new Admin(svc.url, apiKey);
  const conv = await asKey.ok<{ id: string }>('POST', ws('/conversations'), { title: 'Owl questions' });
  mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' })] } });
  mock.enqueue({ reply: { content: 'An owl is a bird.' } });
  const client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model: 'auto', messages: [{ role: 'user', content: 'What is an owl?' }] }, { headers: { 'x-svc-conversation': conv.id } })
    .withResponse();
  assert.is(data.choices[0]!.message.content, 'An owl is a bird.');
  requestId = response.headers.get('x-svc-request-id')!;
  await svc.service.get(TracingFlushToken)();
  await page.getByLabel('Calls of request (x-svc-request-id)').fill(requestId);
  await page.getByRole('button', { name: 'Filter' }).click();
  const record = page.locator('tr[data-call]', { hasText: requestId });
  await record.getByText('ran', { exact: true }).waitFor();
  assert.is(await record.locator('td').nth(3).textContent(), 'lookup');
  assert.is(await record.locator('td').nth(2).textContent(), 'files');
  await screenshot(page, '13-tool-calls');
  await record.getByRole('link', { name: requestId }).click();
  await page.getByRole('heading', { level: 1, name: `Request ${requestId}` }).waitFor();
  await page.locator('tr[data-phase^="upstream attempt 1"]').waitFor();
});

test('conversations: the list, one with its history and kept routing decision, deleted after confirming', async () => {
  await svc.service.get(ConversationsFlushToken)();
  await navTo(page, 'Conversations');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
  await page.getByRole('link', { name: 'Owl questions' }).click();
  await page.getByRole('heading', { level: 1, name: 'Owl questions' }).waitFor();
  const kept = await admin.ok<{ routing: { rule: string; model: string | null; reason: string | null } }>('GET', ws(`/conversations/${page.url().split('/').pop()}`));
  assert.equal([kept.routing.rule, kept.routing.model], ['default', model]);
  assert.match((await page.getByTestId('routing-decision').textContent()) ?? '', `default → ${model}`);
  const history = page.locator('ol.messages > li');
  assert.equal(await history.locator('.msg-text').allTextContents(), ['What is an owl?', 'An owl is a bird.']);
  await history.nth(1).getByText(`(${model})`, { exact: false }).waitFor();
  await history.nth(0).getByRole('link', { name: requestId }).waitFor();
  await screenshot(page, '14-conversation');
  await checkA11y(page, 'conversation');
  await page.getByRole('button', { name: 'Delete Owl questions' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Delete Owl questions' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete conversation' }).click();
  await page.getByText(/^No conversations in this workspace yet\./).waitFor();
  assert.is((await admin.ok<{ data: unknown[] }>('GET', ws('/conversations'))).data.length, 0);
  await screenshot(page, '15-conversations');
  await checkA11y(page, 'conversations');
});

test('removing a server asks first; its call records stay, naming it removed', async () => {
  await navTo(page, 'Tools');
  await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
  await page.getByRole('button', { name: 'Remove files' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  assert.is(await page.locator('tr[data-server="files"]').count(), 1);
  await page.getByRole('button', { name: 'Remove files' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove server' }).click();
  await page.getByText(/^No tool servers in this workspace yet\./).waitFor();
  assert.is((await admin.ok<{ data: unknown[] }>('GET', ws('/tool-servers'))).data.length, 0);
  await page.locator('tr[data-call] td', { hasText: /^removed server mcp_/ }).waitFor();
});

test('both pages fit 390 px and stay accessible; no page error', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const name of ['Tools', 'Conversations']) {
    await navTo(page, name);
    await page.getByLabel('Workspace', { exact: true }).selectOption({ label: 'Research' });
    await page.waitForLoadState('networkidle');
    await assertFits(page, name);
    await screenshot(page, `mobile-${name.toLowerCase()}`);
    await checkA11y(page, `${name} at 390 px`);
  }
  assert.equal(errors, []);
});

test.run();
