import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RetentionToken, StoreToken } from '../../kernel/index.js';
import { shape } from '../support/harness.js';
import { startChatWorld, modelName, type ChatWorld } from '../chat/setup.js';
import { call, newPerson, addMember, within } from '../identity/support.js';
import { DAY } from './support.js';

const test = suite(`recording of prompts and replies (${shape})`);
let w: ChatWorld;
const prompt = 'canary-prompt-41c9 what is in the box?';
const reply = 'canary-reply-9b2e it is a cat';

test.before(async () => {
  w = await startChatWorld({ plugins: { retention: { config: { schedule: '' } } } });
});
test.after(async () => {
  await w?.stop();
});

async function ask(stream: boolean): Promise<string> {
  w.mock.enqueue({ chunks: reply.split(/(?<= )/) });
  if (stream) {
    const { data, response } = await w.client.chat.completions.create({ model: modelName, stream: true, messages: [{ role: 'user', content: prompt }] }).withResponse();
    let text = '';
    for await (const c of data) text += c.choices[0]?.delta.content ?? '';
    assert.is(text, reply);
    return response.headers.get('x-svc-request-id')!;
  }
  const { data, response } = await w.client.chat.completions.create({ model: modelName, messages: [{ role: 'user', content: prompt }] }).withResponse();
  assert.is(data.choices[0]!.message.content, reply);
  return response.headers.get('x-svc-request-id')!;
}

const trace = (id: string, token = w.admin.token) => call(w.svc.url, 'GET', `/workspaces/${w.workspaceId}/requests/${id}/trace`, { auth: token });

test('off by default: the trace has spans but no recording', async () => {
  const r = await call(w.svc.url, 'GET', `/workspaces/${w.workspaceId}/recording`, { auth: w.admin.token });
  assert.equal(r.body, { enabled: false, days: 7 });
  const id = await ask(false);
  assert.ok((await within(5000, async () => (await trace(id)).status === 200)) >= 0, 'the span is written');
  const t = await trace(id);
  assert.is(t.body.recording, null);
  assert.is(t.body.spans.length, 1);
  assert.not.ok(t.text.includes('canary-prompt'));
  const count = await w.svc.service.get(StoreToken).execute<{ n: number | string }>('select count(*) as n from recordings');
  assert.is(Number(count[0]!.n), 0);
});

test('only a workspace admin turns it on; days are 1 to 90', async () => {
  const member = await newPerson(w.svc.url, w.admin.token, 'rec-member@example.test');
  await addMember(w.svc.url, w.admin.token, w.workspaceId, 'rec-member@example.test', 'member');
  const denied = await call(w.svc.url, 'PUT', `/workspaces/${w.workspaceId}/recording`, { auth: member.token, body: { enabled: true } });
  assert.is(denied.status, 403);
  assert.is(denied.body.error.code, 'forbidden');
  for (const days of [0, 91]) {
    const bad = await call(w.svc.url, 'PUT', `/workspaces/${w.workspaceId}/recording`, { auth: w.admin.token, body: { enabled: true, days } });
    assert.is(bad.status, 400);
    assert.is(bad.body.error.param, 'days');
  }
  const on = await call(w.svc.url, 'PUT', `/workspaces/${w.workspaceId}/recording`, { auth: w.admin.token, body: { enabled: true, days: 3 } });
  assert.equal(on.body, { enabled: true, days: 3 });
});

test('on: whole and streamed replies are recorded apart from spans, readable in the trace by workspace admins only; retention removes them after the period', async () => {
  const ids = [await ask(false), await ask(true)];
  for (const id of ids) {
    assert.ok((await within(5000, async () => (await trace(id)).body?.spans?.length === 1)) >= 0);
    const t = await trace(id);
    assert.is(t.status, 200);
    assert.equal(t.body.recording.messages, [{ role: 'user', content: prompt }]);
    assert.is(t.body.recording.reply, reply);
    assert.not.ok(JSON.stringify(t.body.spans).includes('canary'), 'spans never hold text');
  }
  const member = await call(w.svc.url, 'POST', '/sessions', { body: { email: 'rec-member@example.test', password: 'pw-rec-member@example.test-long' } });
  assert.is((await trace(ids[0]!, member.body.token)).status, 403);
  assert.is((await trace('req_nonexistent')).body.error.code, 'not_found');
  assert.not.ok(w.svc.logs.text.includes('canary-prompt') || w.svc.logs.text.includes('canary-reply'));
  const spans = await w.svc.service.get(StoreToken).execute<{ a: string }>('select attributes as a from spans');
  assert.not.ok(spans.some((s) => s.a.includes('canary')));

  // The list of recorded requests (admin UI's Recorded prompts page): newest first, a preview, cursor pages; admins only.
  const list = await call(w.svc.url, 'GET', `/workspaces/${w.workspaceId}/recordings?limit=1`, { auth: w.admin.token });
  assert.is(list.status, 200);
  assert.equal(list.body.data.map((r: { request_id: string; preview: string }) => [r.request_id, r.preview]), [[ids[1], prompt]]);
  const next = await call(w.svc.url, 'GET', `/workspaces/${w.workspaceId}/recordings?limit=1&cursor=${encodeURIComponent(list.body.next_cursor)}`, { auth: w.admin.token });
  assert.equal([next.body.data.map((r: { request_id: string }) => r.request_id), next.body.next_cursor], [[ids[0]], null]);
  const notAdmin = await call(w.svc.url, 'GET', `/workspaces/${w.workspaceId}/recordings`, { auth: member.body.token });
  assert.equal([notAdmin.status, notAdmin.body.error.code], [403, 'forbidden']);

  const retention = w.svc.service.get(RetentionToken);
  const kept = await retention.run({ now: new Date(Date.now() + 2 * DAY) });
  assert.is(kept!.counts.recordings, 0);
  const gone = await retention.run({ now: new Date(Date.now() + 4 * DAY) });
  assert.is(gone!.counts.recordings, 2);
  assert.is((await trace(ids[0]!)).body.recording, null);
});

test.run();
