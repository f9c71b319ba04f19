import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { vendorError, type Behaviour } from '../support/mock-upstream.js';
import { MemberBooks } from './books.js';
import { call, model, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

/**
 * A budget hold per step of the tool loop (plugins/tools/README.md "Budgets"): each model call of
 * the loop is held before it is made, a step that does not fit a cap ends the reply with
 * budget_exceeded, and whatever ends the loop, the request is charged exactly its calls once:
 * usage records = running totals = cache counters, never above the cap, no hold left behind.
 * The model costs 2.5 µUSD a prompt token and 10 an output token; max_tokens 2000 holds 20,000.
 */
const test = suite(`tools: a budget hold per loop step (${shape})`);
let w: ToolsWorld;
let books: MemberBooks;

const heavy = { prompt_tokens: 10, completion_tokens: 1900 }; // 19,025 µUSD
const charge = (u: { prompt_tokens: number; completion_tokens: number }): number => Math.ceil(u.prompt_tokens * 2.5 + u.completion_tokens * 10);
const ask = (text = 'What is an owl?') => ({ model, max_tokens: 2000, messages: [{ role: 'user' as const, content: text }] });
test.before(async () => {
  w = await startToolsWorld();
  books = await MemberBooks.open(w);
});
test.after(async () => w?.stop());
test.before.each(() => {
  w.mock.reset();
  w.mock.respond = undefined;
  w.mcp.calls.length = 0;
});

test('whole: a step that does not fit the member cap ends the reply with 402 budget_exceeded before its tools run; the first call is charged', async () => {
  const { cap, spent } = await books.room(30_000);
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' })], usage: heavy } });
  w.mock.enqueue({ reply: { content: 'never asked' } });
  const err = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': conv } }).then(() => null, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
  assert.ok(err instanceof OpenAI.APIError);
  assert.is(err.status, 402);
  assert.is(err.code, 'budget_exceeded');
  assert.is(err.type, 'budget_exceeded');
  assert.is(err.headers?.get('x-should-retry'), 'false');
  const svc = (err.error as { svc: { scope: string; remaining_micro_usd: number; required_micro_usd: number } }).svc;
  assert.is(upstreamBodies(w.mock).length, 1, 'the second call was never sent');
  assert.equal(w.mcp.calls, [], 'no tool ran whose result could not be used');
  const id = err.headers!.get('x-svc-request-id')!;
  await books.balanced(cap, [id]);
  const hold = await books.holdOf(id);
  assert.equal([hold.state, Number(hold.charge_micro_usd)], ['settled', charge(heavy)]);
  assert.equal(svc.scope, 'member');
  assert.is(svc.remaining_micro_usd, cap - spent - Number(hold.amount_micro_usd), 'the room beside this request\'s own hold');
  assert.ok(svc.required_micro_usd > svc.remaining_micro_usd, JSON.stringify(svc));
  const rec = await books.recordOf(id);
  assert.equal([Number(rec.status), rec.error_code, Number(rec.cost_micro_usd), Number(rec.completion_tokens)], [402, 'budget_exceeded', charge(heavy), 1900]);
});

test('streamed: the stream ends with a budget_exceeded error event after what was sent; the first call is charged', async () => {
  const { cap } = await books.room(30_000);
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: 'Let me look. ', tool_calls: [call('files__lookup', { q: 'owl' })], usage: heavy } });
  const { data: stream, response } = await w.client.chat.completions.create({ ...ask(), stream: true, stream_options: { include_usage: true } }, { headers: { 'x-svc-conversation': conv } }).withResponse();
  let text = '';
  let err: InstanceType<typeof OpenAI.APIError> | undefined;
  try {
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
  } catch (e) {
    err = e as InstanceType<typeof OpenAI.APIError>;
  }
  assert.is(response.status, 200);
  assert.is(text, 'Let me look. ');
  assert.ok(err instanceof OpenAI.APIError, String(err));
  assert.is(err.code, 'budget_exceeded');
  assert.is((err.error as { svc: { scope: string } }).svc.scope, 'member');
  assert.is(upstreamBodies(w.mock).length, 1);
  assert.equal(w.mcp.calls, []);
  const id = response.headers.get('x-svc-request-id')!;
  await books.balanced(cap, [id]);
  const rec = await books.recordOf(id);
  assert.equal([Number(rec.status), rec.error_code, Number(rec.cost_micro_usd)], [200, 'budget_exceeded', charge(heavy)]);
});

test('a turn that stops for approval before any tool runs is not refused for the next call: the client gets pending_approval', async () => {
  const { cap } = await books.room(30_000);
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__delete_item', { id: '9' })], usage: heavy } });
  const { data, response } = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': await w.conversation() } }).withResponse();
  assert.is(response.status, 200);
  assert.match((data as any).svc.pending_approval.id, /^apr_/);
  await books.balanced(cap, [response.headers.get('x-svc-request-id')!]);
});

test('a step that fits: the hold grows by what the next call needs, the reply carries both calls, settle charges both once', async () => {
  const { cap } = await books.room(200_000);
  const conv = await w.conversation();
  const answer = { prompt_tokens: 60, completion_tokens: 40 };
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' })], usage: heavy } });
  w.mock.enqueue({ reply: { content: 'An owl is a bird.', usage: answer } });
  const { data, response } = await w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(data.choices[0]!.message.content, 'An owl is a bird.');
  assert.equal(data.usage, { prompt_tokens: 70, completion_tokens: 1940, total_tokens: 2010 });
  assert.equal(w.mcp.calls, [{ tool: 'lookup', args: { q: 'owl' } }]);
  const id = response.headers.get('x-svc-request-id')!;
  await books.balanced(cap, [id]);
  const hold = await books.holdOf(id);
  assert.is(Number(hold.charge_micro_usd), charge(heavy) + charge(answer));
  // The first call's charge plus the second call's own hold (its output alone is 20,000).
  assert.ok(Number(hold.amount_micro_usd) >= charge(heavy) + 20_000, `held ${hold.amount_micro_usd}`);
  assert.is(Number((await books.recordOf(id)).cost_micro_usd), charge(heavy) + charge(answer));
});

test('the stream cut applies per step: each call may produce up to its max tokens; a step that goes on beyond them is cut with length and charged at the limit', async () => {
  const { cap } = await books.room(200_000);
  const conv = await w.conversation();
  // Step 1: about 70 tokens of text and a tool call (under max_tokens 100, so not cut, though the
  // reply's output will pass 100 in total). Step 2 ignores max_tokens and reports 1,000.
  w.mock.enqueue({ reply: { content: 'word '.repeat(70), tool_calls: [call('files__lookup', { q: 'owl' })], usage: { prompt_tokens: 10, completion_tokens: 80 } } });
  w.mock.enqueue({ chunks: Array.from({ length: 600 }, () => 'hold '), gapMs: 2, reportUsage: { prompt_tokens: 20, completion_tokens: 1000 } });
  const { data: stream, response } = await w.client.chat.completions.create({ ...ask(), max_tokens: 100, stream: true, stream_options: { include_usage: true } }, { headers: { 'x-svc-conversation': conv } }).withResponse();
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  assert.ok(text.startsWith('word '.repeat(70) + 'hold '), 'the first step reached the client whole');
  const held = text.split('hold ').length - 1;
  assert.ok(held >= 90 && held <= 100, `the second step was cut near 100 tokens: ${held}`);
  assert.equal(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean), ['length']);
  assert.is(chunks.at(-1)!.usage!.completion_tokens, 80 + 100, 'each step charged at most its max tokens');
  assert.is(await w.mock.requests.at(-1)!.settled, 'aborted', 'the second call was stopped');
  const id = response.headers.get('x-svc-request-id')!;
  await books.balanced(cap, [id]);
  const rec = await books.recordOf(id);
  assert.equal([Number(rec.completion_tokens), rec.error_code], [180, null]);
  assert.ok(Number(rec.cost_micro_usd) <= Number((await books.holdOf(id)).amount_micro_usd), 'within what was held');
});

test('concurrent loops against a small cap: served or refused with budget_exceeded, never above the cap', async () => {
  const { cap } = await books.room(155_000);
  // Each conversation answers by its own messages: a tool call first (heavy or light), then an answer.
  w.mock.respond = (body): Behaviour => {
    const last = body.messages.at(-1);
    if (last.role === 'tool') return { reply: { content: 'Found it.', usage: { prompt_tokens: 80, completion_tokens: 1500 } } };
    return { reply: { content: null, tool_calls: [call('files__lookup', { q: 'x' })], usage: String(last.content).includes('heavy') ? heavy : { prompt_tokens: 10, completion_tokens: 20 } } };
  };
  const results = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
    const headers = { 'x-svc-conversation': await w.conversation() };
    const body = ask(`Loop ${i}, ${i % 2 ? 'heavy' : 'light'}`);
    try {
      if (i % 3 === 0) {
        const { data: stream, response } = await w.client.chat.completions.create({ ...body, stream: true }, { headers }).withResponse();
        try {
          for await (const _ of stream) void _;
          return { id: response.headers.get('x-svc-request-id')!, outcome: 'served' };
        } catch (e) {
          return { id: response.headers.get('x-svc-request-id')!, outcome: (e as InstanceType<typeof OpenAI.APIError>).code ?? 'broken' };
        }
      }
      const { response } = await w.client.chat.completions.create(body, { headers }).withResponse();
      return { id: response.headers.get('x-svc-request-id')!, outcome: 'served' };
    } catch (e) {
      const err = e as InstanceType<typeof OpenAI.APIError>;
      return { id: err.headers?.get('x-svc-request-id') ?? '', outcome: `${err.status} ${err.code}` };
    }
  }));
  const outcomes = results.map((r) => r.outcome);
  assert.ok(outcomes.every((o) => ['served', 'budget_exceeded', '402 budget_exceeded'].includes(o)), outcomes.join(', '));
  assert.ok(outcomes.includes('served') && outcomes.some((o) => o !== 'served'), outcomes.join(', '));
  await books.balanced(cap, results.map((r) => r.id));
});

test('abort mid-loop (whole, while a tool runs; streamed, while the second call waits): every hold settled, only what was made is charged', async () => {
  const { cap } = await books.room(200_000);
  const ids: string[] = [];
  const abortWhen = async (ready: () => boolean, run: (signal: AbortSignal) => Promise<unknown>) => {
    const ac = new AbortController();
    const running = run(ac.signal).catch(() => {});
    for (let i = 0; i < 300 && !ready(); i++) await new Promise((done) => setTimeout(done, 10));
    assert.ok(ready(), 'reached the point to abort at');
    ac.abort();
    await running;
  };
  let conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__hang', {})], usage: heavy } });
  await abortWhen(() => w.mcp.calls.length > 0, (signal) => w.client.chat.completions.create(ask(), { headers: { 'x-svc-conversation': conv }, signal }));
  conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call('files__lookup', { q: 'owl' })], usage: heavy } });
  w.mock.enqueue({ hang: true });
  await abortWhen(() => upstreamBodies(w.mock).length === 3, async (signal) => {
    for await (const _ of await w.client.chat.completions.create({ ...ask(), stream: true }, { headers: { 'x-svc-conversation': conv }, signal })) void _;
  });
  for (let i = 0; i < 200 && ids.length < 2; i++) {
    await books.flush();
    ids.splice(0, ids.length, ...(await books.sql<{ id: string }>('select id from usage_records where client_closed = 1 order by created_at')).map((r) => r.id));
    await new Promise((done) => setTimeout(done, 20));
  }
  assert.is(ids.length, 2);
  await books.balanced(cap, ids);
  for (const id of ids) {
    const [hold, rec] = [await books.holdOf(id), await books.recordOf(id)];
    assert.equal([hold.state, Number(hold.charge_micro_usd), Number(rec.cost_micro_usd)], ['settled', charge(heavy), charge(heavy)]);
    // Both held a second call (the pre-check before the tools grew the hold); only the first was made.
    assert.ok(Number(hold.amount_micro_usd) >= charge(heavy) + 20_000, `held ${hold.amount_micro_usd}`);
  }
  assert.equal((await Promise.all(ids.map((id) => books.recordOf(id)))).map((r) => Number(r.status)), [499, 200], 'the whole one never answered; the stream had begun');
});

test('the other ends of a loop (upstream failure, pending approval, revocation): every hold settled, only what was made is charged', async () => {
  const { cap } = await books.room(200_000);
  const first = (tool: string, args: Record<string, unknown>) => ({ reply: { content: null, tool_calls: [call(tool, args)], usage: heavy } });
  const headers = async () => ({ 'x-svc-conversation': await w.conversation() });
  const ids: string[] = [];
  // The second call fails for good (the provider refuses the key): 502, no retry can help.
  w.mock.enqueue(first('files__lookup', { q: 'owl' }));
  w.mock.enqueue({ error: vendorError('openai-invalid-api-key') });
  const failed = await w.client.chat.completions.create(ask(), { headers: await headers() }).then(() => null, (e: InstanceType<typeof OpenAI.APIError>) => e);
  assert.equal([failed?.status, failed?.code], [502, 'provider_auth_failed']);
  ids.push(failed!.headers!.get('x-svc-request-id')!);
  // A call that needs approval stops the loop after the first model call.
  w.mock.enqueue(first('files__delete_item', { id: '7' }));
  const { data, response } = await w.client.chat.completions.create(ask(), { headers: await headers() }).withResponse();
  assert.match((data as any).svc.pending_approval.id, /^apr_/);
  ids.push(response.headers.get('x-svc-request-id')!);
  // The key is revoked while a tool runs: 403 access_revoked.
  const key = await w.ws<{ id: string; key: string }>('POST', '/keys', { name: 'revoked mid-loop' });
  const client = new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: key.body.key, maxRetries: 0 });
  w.mock.enqueue(first('files__hang', {}));
  const running = client.chat.completions.create(ask(), { headers: await headers() }).then(() => null, (e: InstanceType<typeof OpenAI.APIError>) => e);
  for (let i = 0; i < 300 && !w.mcp.calls.some((c) => c.tool === 'hang'); i++) await new Promise((done) => setTimeout(done, 10));
  assert.ok(w.mcp.calls.some((c) => c.tool === 'hang'), 'the tool is running');
  assert.is((await w.ws('DELETE', `/keys/${key.body.id}`)).status, 204);
  const revoked = await running;
  assert.equal([revoked?.status, revoked?.code], [403, 'access_revoked']);
  ids.push(revoked!.headers!.get('x-svc-request-id')!);
  await books.balanced(cap, ids);
  for (const id of ids) {
    const [hold, rec] = [await books.holdOf(id), await books.recordOf(id)];
    assert.equal([hold.state, Number(hold.charge_micro_usd), Number(rec.cost_micro_usd)], ['settled', charge(heavy), charge(heavy)], id);
  }
});

test.run();
