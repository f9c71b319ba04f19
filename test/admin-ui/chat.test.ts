import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { McpTestServer } from '../support/mcp-server.js';
import { checkA11y, navTo, screenshot } from './browser.js';
import { finishAtPhoneWidth, lastReply, models, replyDone, say, startChatUi, until, type ChatUiWorld } from './chat-support.js';

// The chat page end to end: a conversation with `auto` against the mock upstream (streamed, with
// what decided it and its trace), a workspace tool approved for good and the loop going on,
// history after a reload, rename and delete; at 1280 and 390 px, checked with axe.
const test = suite(`admin-ui: chat (${shape})`);
let w: ChatUiWorld;
let mcp: McpTestServer;
let page: ChatUiWorld['page'];
const fence = 'Why does this fail?\n```python\nprint(1/0)\n```';
const call = (id: string) => ({ id: `call_${id}`, type: 'function' as const, function: { name: 'files__delete_item', arguments: JSON.stringify({ id }) } });

test.before(async () => {
  w = await startChatUi();
  page = w.page;
  mcp = await new McpTestServer().start();
  await w.ws('POST', '/tool-servers', { name: 'files', url: mcp.url });
  await w.admin.ok('POST', '/tool-origins', { origin: mcp.origin });
});
test.after(async () => {
  await w?.stop();
  await mcp?.stop();
});

test('the model picker offers exactly what GET /v1/models lists for the person', async () => {
  await navTo(page, 'Chat');
  const listed = await fetch(`${w.svc.url}/v1/models`, { headers: { authorization: `Bearer ${w.admin.token}`, 'x-svc-workspace': w.workspaceId } });
  const ids = ((await listed.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
  assert.equal(ids, ['auto', 'route/code', models.blind, models.coder, models.general]);
  // The picker fills once the page's own GET /v1/models answers: wait for its last entry, then read all.
  const picker = page.getByLabel('Model', { exact: true });
  await picker.locator(`option[value="${ids.at(-1)}"]`).waitFor({ state: 'attached' });
  const options = await picker.locator('option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
  assert.equal(options, ids);
  assert.is(await page.getByLabel('Model', { exact: true }).inputValue(), 'auto');
  await page.getByText('No conversations yet.').waitFor();
});

test('a message with auto streams its reply, shows what decided it, and links to its trace', async () => {
  w.mock.enqueue({ chunks: ['Dividing by zero ', 'raises ZeroDivisionError.'], gapMs: 1500 });
  const response = page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions'));
  await say(page, fence);
  // Streamed: the first piece is on screen while the reply is still being written (Stop offered).
  await lastReply(page).getByText('Dividing by zero').waitFor();
  assert.is(await lastReply(page).getAttribute('aria-busy'), 'true');
  assert.is(await page.getByRole('button', { name: 'Stop' }).count(), 1);
  await replyDone(page);
  await lastReply(page).getByText('Dividing by zero raises ZeroDivisionError.').waitFor();
  const headers = (await response).headers();
  assert.equal([headers['x-svc-routing-rule'], headers['x-svc-route'], headers['x-svc-model']], ['signal', 'code', models.coder]);

  // The person's cookie, the CSRF header, the workspace and the new conversation; never a key.
  const sent = await w.sent[0]!.allHeaders();
  assert.match(sent.cookie ?? '', /svc_session=/);
  assert.is(sent.authorization, undefined);
  assert.is(sent['x-svc-csrf'], '1');
  assert.is(sent['x-svc-workspace'], w.workspaceId);
  assert.match(sent['x-svc-conversation'] ?? '', /^conv_/);
  assert.equal(JSON.parse(w.sent[0]!.postData()!), { model: 'auto', messages: [{ role: 'user', content: fence }], stream: true, stream_options: { include_usage: true } });

  await lastReply(page).getByText(`Answered by ${models.coder}`).click();
  const facts = lastReply(page).locator('dl.facts');
  await facts.getByText('A signal in the message (such as a code block) sent it to route/code.').waitFor();
  assert.equal(await facts.locator('dd code').allTextContents(), ['signal', 'route/code', headers['x-svc-request-id']]);
  await page.getByRole('link', { name: 'Why does this fail?' }).waitFor(); // titled from its first line
  await screenshot(page, '10-chat');
  await checkA11y(page, 'chat');

  const requestId = headers['x-svc-request-id']!;
  assert.ok(await until(async () => (await w.admin.call('GET', `/requests/${requestId}`)).status === 200), 'trace stored');
  await lastReply(page).getByRole('link', { name: `Trace of request ${requestId}` }).click();
  await page.getByRole('heading', { level: 1, name: `Request ${requestId}` }).waitFor();
  await page.locator('tr[data-phase^="upstream attempt 1"]').waitFor();
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'Chat' }).waitFor();
});

test('a workspace tool needing approval: Approve always runs it, the reply streams on, later calls need no approval', async () => {
  await lastReply(page).getByText('Dividing by zero raises ZeroDivisionError.').waitFor();
  w.mock.enqueue({ reply: { content: 'I will delete it.', tool_calls: [call('42')] } });
  await page.getByLabel('Message', { exact: true }).fill('Delete item 42 please');
  await page.getByLabel('Message', { exact: true }).press('Enter'); // Enter sends
  const approval = page.getByRole('group', { name: /Approval needed/ });
  await approval.getByText('files__delete_item').waitFor();
  assert.equal(JSON.parse((await approval.getByLabel('Tool arguments').textContent())!), { id: '42' });
  assert.equal(mcp.calls, [], 'nothing ran before the approval');
  await screenshot(page, '11-chat-approval');
  await checkA11y(page, 'chat with an approval');
  // The waiting approval survives a reload of the tab.
  await page.reload();
  await approval.getByText('files__delete_item').waitFor();

  w.mock.enqueue({ chunks: ['Item 42 ', 'is gone.'], gapMs: 300 });
  await approval.getByRole('button', { name: 'Approve always' }).click();
  await lastReply(page).getByText('Item 42 is gone.').waitFor();
  await replyDone(page);
  await approval.getByText('You approved this tool for good in this workspace').waitFor();
  assert.equal(mcp.calls, [{ tool: 'delete_item', args: { id: '42' } }]);
  const answer = await w.sent.at(-1)!.allHeaders();
  assert.match(answer['x-svc-approve'] ?? '', /^apr_/);
  assert.is(answer['x-svc-approve-scope'], 'always');
  // The answer resends the stopped request's messages; the service adds the tool's steps after them.
  const messages = JSON.parse(w.sent.at(-1)!.postData()!).messages;
  assert.equal(messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'user']);
  const upstream = w.mock.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;
  assert.equal(upstream.messages.at(-1), { role: 'tool', content: 'deleted 42', tool_call_id: 'call_42' });

  w.mock.enqueue({ reply: { content: null, tool_calls: [call('43')] } });
  w.mock.enqueue({ chunks: ['Deleted 43 too.'] });
  await say(page, 'Now delete item 43');
  await lastReply(page).getByText('Deleted 43 too.').waitFor();
  await replyDone(page);
  assert.equal(mcp.calls.map((c) => c.args), [{ id: '42' }, { id: '43' }]);
  assert.is(await page.getByRole('group', { name: /Approval needed/ }).count(), 1, 'approved for good: not asked again');
});

test('after a reload the conversation is there with its history; rename and delete', async () => {
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Chat' }).waitFor();
  const mine = page.getByRole('article', { name: 'Your message' });
  await lastReply(page).getByText('Deleted 43 too.').waitFor();
  // The first message is its text and a code block (fences shown as one).
  assert.equal(await mine.allTextContents(), ['Why does this fail?print(1/0)\n', 'Delete item 42 please', 'Now delete item 43']);
  assert.is(await mine.first().locator('pre.code').textContent(), 'print(1/0)\n');
  assert.equal(await page.getByRole('article', { name: 'Reply' }).evaluateAll((els) => els.map((e) => (e as unknown as { innerText: string }).innerText.split('\n')[0])), [
    'Dividing by zero raises ZeroDivisionError.', 'I will delete it.', 'Item 42 is gone.', 'Deleted 43 too.',
  ]);
  await page.getByRole('link', { name: 'Why does this fail?' }).and(page.locator('[aria-current="page"]')).waitFor();

  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByLabel('Conversation title').fill('Debugging');
  await page.getByRole('button', { name: 'Save title' }).click();
  await page.getByRole('heading', { level: 2, name: 'Debugging' }).waitFor();
  await page.getByRole('link', { name: 'Debugging' }).waitFor();
  const listed = await w.ws<{ data: Array<{ title: string }> }>('GET', '/conversations');
  assert.equal(listed.body.data.map((c) => c.title), ['Debugging']);

  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.getByRole('heading', { level: 2, name: 'New conversation' }).waitFor();
  await say(page, 'Hello there');
  await lastReply(page).getByText('Hello from the mock.').waitFor();
  await page.getByRole('heading', { level: 2, name: 'Hello there' }).waitFor();
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete conversation' }).click();
  await page.getByRole('heading', { level: 2, name: 'New conversation' }).waitFor();
  await page.getByRole('link', { name: 'Hello there' }).waitFor({ state: 'detached' });
  assert.equal((await w.ws<{ data: Array<{ title: string }> }>('GET', '/conversations')).body.data.map((c) => c.title), ['Debugging']);
});

test('at 390 px the page fits and stays accessible; no page error was logged', async () => {
  await page.getByRole('link', { name: 'Debugging' }).click();
  await lastReply(page).getByText('Deleted 43 too.').waitFor();
  await finishAtPhoneWidth(w, 'chat');
});

test.run();
