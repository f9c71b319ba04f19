import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { vendorError } from '../support/mock-upstream.js';
import { checkA11y, navTo, screenshot } from './browser.js';
import { finishAtPhoneWidth, lastReply, models, replyDone, say, startChatUi, type ChatUiWorld } from './chat-support.js';

// The chat page when things go wrong: attachments a model cannot read (the API's own message) or
// over the limit, a provider's refusal, a stream that breaks off (Try again), Stop, a budget
// refusal (402) and a rate-limit refusal (429), each shown as a sentence, never as JSON.
const test = suite(`admin-ui: chat errors and attachments (${shape})`);
let w: ChatUiWorld;
let page: ChatUiWorld['page'];
type Json = any;
// A 1×1 PNG and a PDF header: the API checks each attachment's signature.
const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
const upstreamChats = () => w.mock.requests.filter((r) => r.path === '/v1/chat/completions');
/** The UI's money format (web/ui.js) for the expected sentences. */
function dollars(micro: number): string {
  const usd = micro / 1e6;
  return usd !== 0 && Math.abs(usd) < 0.01 ? `$${usd.toFixed(6).replace(/0+$/, '')}` : `$${usd.toFixed(2)}`;
}

test.before(async () => {
  // Five model requests an hour: the sixth this suite starts (refusals before admission do not count) gets 429.
  w = await startChatUi({ 'rate-limit': { config: { requests: 5, windowSeconds: 3600 } } });
  page = w.page;
  await navTo(page, 'Chat');
});
test.after(async () => w?.stop());

async function alertText(): Promise<string> {
  const alert = lastReply(page).getByRole('alert');
  await alert.waitFor();
  const text = (await alert.locator('p').first().textContent())!;
  assert.not.match(text, /[{}]|"error"/, 'a sentence, not JSON');
  return text;
}

test('an image for a model that cannot read images: the API’s own message; nothing is sent upstream', async () => {
  await page.getByLabel('Model', { exact: true }).selectOption(models.blind);
  await page.locator('form.composer input[type="file"]').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
  await page.getByText('dot.png').waitFor();
  const response = page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions'));
  await say(page, 'What is in this picture?');
  const refused = await response;
  assert.is(refused.status(), 422);
  const body = (await refused.json()) as Json;
  assert.is(body.error.code, 'unsupported_input');
  assert.is(await alertText(), body.error.message);
  assert.equal(upstreamChats(), []);
  assert.is(await page.getByRole('article', { name: 'Your message' }).getByRole('img', { name: 'Attached image' }).count(), 1);
});

test('over 10 MB is refused before sending; a dropped text file and a PDF from the file button are sent as data: URLs', async () => {
  const input = page.locator('form.composer input[type="file"]');
  await input.setInputFiles({ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(11 * 1024 * 1024, 'a') });
  await page.getByRole('alert').filter({ hasText: 'big.txt is 11.0 MB: an attachment may be at most 10 MB.' }).waitFor();
  await page.getByLabel('Model', { exact: true }).selectOption(models.general);
  // Drag and drop onto the composer, as a person would from their desktop.
  const drop = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['Remember the milk'], 'notes.txt', { type: 'text/plain' }));
    return dt;
  })()`);
  await page.dispatchEvent('form.composer', 'drop', { dataTransfer: drop });
  await page.getByText('notes.txt').waitFor();
  await input.setInputFiles({ name: 'doc.pdf', mimeType: 'application/pdf', buffer: pdf });
  await page.getByRole('listitem').filter({ hasText: 'doc.pdf' }).waitFor();
  await say(page, 'Summarise these');
  await lastReply(page).getByText('Hello from the mock.').waitFor();
  await replyDone(page);
  const content = JSON.parse(w.sent.at(-1)!.postData()!).messages.at(-1).content;
  assert.equal(content, [
    { type: 'text', text: 'Summarise these' },
    { type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from('Remember the milk').toString('base64')}` } },
    { type: 'file', file: { filename: 'doc.pdf', file_data: `data:application/pdf;base64,${pdf.toString('base64')}` } },
  ]);
  // The failed image message was not kept, so it is not resent.
  assert.equal(JSON.parse(w.sent.at(-1)!.postData()!).messages.length, 1);
  assert.equal(upstreamChats().at(-1)!.body.messages[0].content[1], { type: 'text', text: '--- file: notes.txt ---\nRemember the milk\n--- end of file: notes.txt ---' });
});

test('a budget refusal (402) says which budget, its room left and what the request needed', async () => {
  const me = await w.admin.ok<Json>('GET', '/me');
  const cap = await w.ws<Json>('POST', '/budget-caps', { scope: 'member', person_id: me.person.id, amount_micro_usd: 10_000, period: 'month' });
  const response = page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions'));
  await say(page, 'One more question');
  const refused = await response;
  assert.is(refused.status(), 402);
  const { svc } = ((await refused.json()) as Json).error;
  assert.is(svc.scope, 'member');
  assert.is(await alertText(), `Your budget in this workspace has no room for this request, even on a cheaper model. It has ${dollars(svc.remaining_micro_usd)} left, and this request needed up to ${dollars(svc.required_micro_usd)}. Nothing was sent; try again when the budget resets or an admin raises it.`);
  assert.is(await lastReply(page).getByRole('button', { name: 'Try again' }).count(), 0, 'retrying does not help');
  await w.ws('DELETE', `/budget-caps/${cap.body.id}`);
});

test('a provider problem is a sentence naming what to do', async () => {
  w.mock.enqueue({ error: vendorError('openai-insufficient-quota') });
  await say(page, 'Are you there?');
  assert.is(await alertText(), "The provider local refused because of its account's billing (usually no credit left). An admin must check the provider's account.");
  await lastReply(page).getByText(/^Request id: req_/).waitFor();
});

test('a stream that breaks off: what arrived stays, the error event is a sentence, Try again sends it again', async () => {
  w.mock.enqueue({ chunks: ['Partial ', 'answer ', 'here'], breakAfter: 1 });
  await say(page, 'Tell me a story');
  await lastReply(page).getByText('Partial').waitFor();
  assert.is(await alertText(), 'The reply broke off before it was finished, so it is not kept in the conversation. Try again.');
  await screenshot(page, '12-chat-errors');
  await checkA11y(page, 'chat errors');
  await lastReply(page).getByRole('button', { name: 'Try again' }).click();
  await lastReply(page).getByText('Hello from the mock.').waitFor();
  await replyDone(page);
  assert.is(JSON.parse(w.sent.at(-1)!.postData()!).messages.at(-1).content, 'Tell me a story');
});

test('Stop aborts the streaming reply; the upstream call is aborted too', async () => {
  w.mock.enqueue({ chunks: ['Slow ', 'reply ', 'here'], gapMs: 3000 });
  await say(page, 'Take your time');
  await lastReply(page).getByText('Slow').waitFor();
  await page.getByRole('button', { name: 'Stop' }).click();
  await lastReply(page).getByText('Stopped. This reply is not kept in the conversation.').waitFor();
  assert.is(await upstreamChats().at(-1)!.settled, 'aborted');
  await page.getByRole('button', { name: 'Send' }).waitFor();
});

test('a rate-limit refusal (429) says how long to wait, from retry_after_seconds', async () => {
  const response = page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions'));
  await say(page, 'And another');
  const refused = await response;
  assert.is(refused.status(), 429);
  const seconds = ((await refused.json()) as Json).error.svc.retry_after_seconds;
  assert.is(String(seconds), refused.headers()['retry-after']);
  const wait = seconds < 90 ? `${seconds} seconds` : `about ${Math.round(seconds / 60)} minutes`;
  assert.is(await alertText(), `You have started more requests than your rate limit allows (your chat and your API keys share it). Nothing was sent; try again in ${wait}.`);
  await lastReply(page).getByRole('button', { name: 'Try again' }).waitFor();
  await finishAtPhoneWidth(w, 'chat-errors');
});

test.run();
