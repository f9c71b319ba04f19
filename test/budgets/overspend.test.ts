import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { createBacking, shape } from '../support/harness.js';
import { MockUpstream, approxTokens, type Behaviour } from '../support/mock-upstream.js';
import { holdsSet, counterKey } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { apiError, cacheOf, charged, client, newKey, personId, provision, startInstance, total, type Instance } from './support.js';

/**
 * THE OVERSPEND TEST (issue #5): caps of about $1.00 at every scope ($0.40–$1.30), 500 concurrent streamed and
 * whole requests through two instances sharing the database and cache (one in the embedded
 * shape), replies of varying size with real usage. No cap is exceeded by a single micro-USD.
 */
const test = suite('budgets: no cap is ever overspent');

const words = 'budgets hold every request before it is sent so that no cap runs over'.split(' ');
// 4 to 78 words: at most 99 tokens as the mock counts them (a quarter of the characters), within
// max_tokens 100. Up to 93 words made 77 of the 520 replies report more output than requested, as no
// real upstream does; a whole reply that does is charged as reported (budgets README "The output
// rule"), which let the instance cap be passed by 6 µUSD once in several runs.
const reply = (i: number): string => Array.from({ length: 4 + ((i * 37) % 75) }, (_, j) => words[(i + j) % words.length]).join(' ');
const prompt = (i: number): string => `Request ${i}: ` + 'tell me about budgets and holds. '.repeat(1 + (i % 12));

/** A stream that breaks off after two chunks (no usage reported); a whole reply answers normally. */
function breakOff(content: string): Behaviour {
  return {
    raw: (_req, res, record) => {
      const head = { id: 'chatcmpl-cut', created: 0, model: 'big', object: 'chat.completion.chunk' };
      if (!record.body?.stream) {
        // The prompt as the mock counts every other reply's (a fixed 40 exceeded the hold of the
        // shortest prompts, whose bound is 39, and made the test depend on which request got it).
        const messages = (record.body?.messages ?? []) as Array<{ content?: unknown }>;
        const prompted = approxTokens(messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join(''));
        const body = JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: prompted, completion_tokens: 30, total_tokens: prompted + 30 } });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of content.split(' ').slice(0, 2)) res.write(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: piece + ' ' }, finish_reason: null }] })}\n\n`);
      setTimeout(() => res.destroy(), 20);
    },
  };
}

interface Result { status: number; model?: string; fallbackFrom?: string | null; fallbackScope?: string | null; code?: string; svc?: Record<string, unknown>; broke?: boolean }

async function call(c: OpenAI, i: number): Promise<Result> {
  const body = { model: 'mock:big', messages: [{ role: 'user' as const, content: prompt(i) }], max_tokens: 100 };
  try {
    if (i % 2 === 0) {
      const { data, response } = await c.chat.completions.create(body).withResponse();
      return { status: response.status, model: data.model, fallbackFrom: response.headers.get('x-svc-fallback-from'), fallbackScope: response.headers.get('x-svc-fallback-scope') };
    }
    const { data: stream, response } = await c.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: i % 4 === 1 } }).withResponse();
    const r: Result = { status: response.status, model: response.headers.get('x-svc-model') ?? '', fallbackFrom: response.headers.get('x-svc-fallback-from'), fallbackScope: response.headers.get('x-svc-fallback-scope') };
    try {
      for await (const _ of stream) void _;
    } catch {
      r.broke = true; // a reply that broke off after its first chunk: still charged for what was produced
    }
    return r;
  } catch (err) {
    const e = apiError(err);
    return { status: e.status, code: e.code, svc: e.svc };
  }
}

/**
 * Waits until `inst` serves `caps` caps (instance-wide plus those of `workspaces`) from its own
 * snapshot (the caps lists read it), and each workspace's fallback model where one is given. A
 * fixed pause was not enough on a loaded machine: requests that reached the other instance before
 * its snapshot had a cap were not held against it (a cap applies from the next request), and
 * spent past it.
 */
async function heard(inst: Instance, caps: number, workspaces: string[], fallback: Record<string, string> = {}): Promise<void> {
  let seen = -1;
  for (let tries = 0; tries < 200; tries++) {
    const lists = [await inst.admin.ok<{ data: unknown[] }>('GET', '/budget-caps'), ...(await Promise.all(workspaces.map((w) => inst.admin.ok<{ data: unknown[] }>('GET', `/workspaces/${w}/budget-caps`))))];
    const ids = new Set(lists.flatMap((l) => l.data.map((c) => (c as { id: string }).id)));
    seen = ids.size;
    let settings = true;
    for (const [w, model] of Object.entries(fallback)) settings &&= (await inst.admin.ok<{ fallback_model: string | null }>('GET', `/workspaces/${w}/budget-settings`)).fallback_model === model;
    if (seen === caps && settings) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.unreachable(`the instance serves ${seen} of ${caps} caps`);
}

/** Two instances sharing one backing (one in the embedded shape), the mock with `mock:big` and `mock:small`. */
async function withInstances(run: (a: Instance, b: Instance, mock: MockUpstream) => Promise<void>): Promise<void> {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const a = await startInstance(backing);
  const b = shape === 'scale-out' ? await startInstance(backing) : a;
  try {
    await provision(a.admin, mock, { big: { input: '30.00', output: '120.00' }, small: { input: '1.00', output: '4.00' } });
    await run(a, b, mock);
  } finally {
    if (b !== a) await b.stop();
    await a.stop();
    await mock.stop();
    await backing.drop();
  }
}

test('500 concurrent requests: served, moved to a cheaper model, or refused with 402; caps hold to the micro-USD', () =>
  withInstances(async (a, b, mock) => {
    const wsA = await a.admin.workspace('A');
    const wsB = await a.admin.workspace('B');
    const me = await personId(a.admin);
    const [a1, a2, b1] = [await newKey(a.admin, wsA, 'a1'), await newKey(a.admin, wsA, 'a2'), await newKey(a.admin, wsB, 'b1')];
    await a.admin.ok('PUT', `/workspaces/${wsA}/budget-settings`, { fallback_model: 'mock:small' });
    const caps = [
      await a.admin.ok<{ id: string }>('POST', '/budget-caps', { amount_micro_usd: 1_300_000, period: 'month' }),
      await a.admin.ok('POST', `/workspaces/${wsA}/budget-caps`, { scope: 'workspace', amount_micro_usd: 1_000_000, period: 'day' }),
      await a.admin.ok('POST', `/workspaces/${wsA}/budget-caps`, { scope: 'member', person_id: me, amount_micro_usd: 900_000, period: 'week' }),
      await a.admin.ok('POST', `/workspaces/${wsA}/budget-caps`, { scope: 'key', key_id: a1.id, amount_micro_usd: 400_000, period: 'lifetime' }),
      await a.admin.ok('POST', `/workspaces/${wsB}/budget-caps`, { scope: 'workspace', amount_micro_usd: 1_000_000, period: 'month' }),
      await a.admin.ok('POST', `/workspaces/${wsB}/budget-caps`, { scope: 'key', key_id: b1.id, amount_micro_usd: 600_000, period: 'day' }),
    ];
    assert.is(caps.length, 6);
    await heard(b, 6, [wsA, wsB], { [wsA]: 'mock:small' }); // the other instance heard the change messages
    for (let i = 0; i < 520; i++) mock.enqueue(i % 25 === 3 ? breakOff(reply(i)) : { reply: { content: reply(i) } });

    const keys = [a1, a2, b1];
    const clients = [a, b].flatMap((inst) => keys.map((k) => ({ c: client(inst, k.value), key: k })));
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => call(clients[i % clients.length]!.c, i).then((r) => ({ ...r, key: clients[i % clients.length]!.key }))));
    const elapsed = performance.now() - started;

    const served = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    assert.is(served.length + refused.length, 500, JSON.stringify(results.filter((r) => r.status !== 200 && r.status !== 402).slice(0, 3)));
    for (const r of refused) {
      assert.is(r.code, 'budget_exceeded');
      assert.ok(['instance', 'workspace', 'member', 'key'].includes(String(r.svc?.scope)));
      assert.ok(Number(r.svc?.remaining_micro_usd) >= 0 && Number(r.svc?.required_micro_usd) > Number(r.svc?.remaining_micro_usd), JSON.stringify(r.svc));
    }
    for (const r of served) {
      assert.ok(r.model === 'mock:big' || r.model === 'mock:small', String(r.model));
      if (r.fallbackFrom !== null) {
        assert.is(r.model, 'mock:small');
        assert.is(r.fallbackFrom, 'mock:big');
        assert.ok(['instance', 'workspace', 'member', 'key'].includes(String(r.fallbackScope)));
      } else {
        assert.is(r.fallbackScope, null);
        // An explicit model is never answered by another model unless a budget moved it (issue 19).
        assert.is(r.model, 'mock:big');
      }
    }
    const fallbacks = served.filter((r) => r.fallbackFrom !== null).length;
    assert.ok(fallbacks > 0 && refused.length > 0 && served.length - fallbacks > 0, `served ${served.length}, fallback ${fallbacks}, refused ${refused.length}`);

    // Every hold ends: one settled record per request that passed the hold, nothing left in the cache.
    let holds: Array<{ state: string; n: string | number; charge: string | number | null }> = [];
    for (let tries = 0; tries < 100; tries++) {
      await a.flush();
      if (b !== a) await b.flush();
      holds = await a.sql('select state, count(*) as n, sum(charge_micro_usd) as charge from budget_holds group by state');
      if (holds.reduce((n, h) => n + Number(h.n), 0) === served.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(holds.map((h) => [h.state, Number(h.n)]), [['settled', served.length]]);
    assert.equal(await cacheOf(a).expired(holdsSet, Number.POSITIVE_INFINITY, 10_000), []);

    const now = Date.now();
    const scopes: Array<[string, number, string, unknown[]]> = [
      [`instance:*:month:${periodKey('month', now)}`, 1_300_000, '1 = 1', []],
      [`workspace:${wsA}:day:${periodKey('day', now)}`, 1_000_000, 'workspace_id = ?', [wsA]],
      [`member:${wsA}/${me}:week:${periodKey('week', now)}`, 900_000, 'workspace_id = ? and person_id = ?', [wsA, me]],
      [`key:${a1.id}:lifetime:all`, 400_000, 'key_id = ?', [a1.id]],
      [`workspace:${wsB}:month:${periodKey('month', now)}`, 1_000_000, 'workspace_id = ?', [wsB]],
      [`key:${b1.id}:day:${periodKey('day', now)}`, 600_000, 'key_id = ?', [b1.id]],
      [`key:${a2.id}:month:${periodKey('month', now)}`, Infinity, 'key_id = ?', [a2.id]],
    ];
    const report: string[] = [];
    for (const [key, cap, where, params] of scopes) {
      const sum = await charged(a, where, params);
      report.push(`${key.split(':')[0]} ${sum}/${cap}`);
      assert.ok(sum <= cap, `${key}: charged ${sum} > cap ${cap}`);
      assert.is(await total(a, key), sum, `running total ${key} equals the sum of its usage records`);
      // No hold in flight: the shared counter is exactly the settled total.
      if (cap !== Infinity) assert.is(Number(await cacheOf(a).get(counterKey(key))), sum, `counter ${key}`);
    }
    assert.ok((await charged(a)) > 1_000_000, `the caps were used: ${report.join(', ')}`);
    const refusedBy = new Set(refused.map((r) => String(r.svc?.scope)));
    assert.ok(refusedBy.size >= 1, `refused by ${[...refusedBy].join(', ')}`);
    assert.ok(elapsed < 60_000, `took ${Math.round(elapsed)} ms`);
    if (process.env.SVC_PRINT_OVERSPEND) console.log(`\n${shape}: ${served.length} served (${fallbacks} on the cheaper model, ${results.filter((r) => r.broke).length} broke off), ${refused.length} refused (by ${[...refusedBy].join('/')}), ${Math.round(elapsed)} ms; ${report.join(', ')}`);
  }),
);

/**
 * Issue 9 item 3: an upstream that ignores `max_tokens` (streams 600 words for max_tokens 100 and
 * reports 1,000 output tokens). Every stream is cut at what its hold covers, so 200 concurrent
 * streams through two instances still end within every cap.
 */
test('a misbehaving upstream (1,000 output tokens for max_tokens 100): streams are cut at the hold and no cap is exceeded', () =>
  withInstances(async (a, b, mock) => {
    const ws = await a.admin.workspace('M');
    const k1 = await newKey(a.admin, ws, 'm1');
    await a.admin.ok('POST', '/budget-caps', { amount_micro_usd: 500_000, period: 'month' });
    await a.admin.ok('POST', `/workspaces/${ws}/budget-caps`, { scope: 'key', key_id: k1.id, amount_micro_usd: 300_000, period: 'day' });
    await heard(b, 2, [ws]);
    const words = Array.from({ length: 600 }, (_, j) => (j % 2 ? 'budget ' : 'hold '));
    mock.defaultBehaviour = { chunks: words, reportUsage: { prompt_tokens: 20, completion_tokens: 1000 } };
    const clients = [client(a, k1.value), client(b, k1.value)];
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const body = { model: 'mock:big', messages: [{ role: 'user' as const, content: prompt(i) }], max_tokens: 100, stream: true as const };
        try {
          const stream = await clients[i % 2]!.chat.completions.create(body);
          let finish: string | null = null;
          for await (const c of stream) finish = c.choices[0]?.finish_reason ?? finish;
          return { status: 200, finish };
        } catch (err) {
          return { status: apiError(err).status, finish: null };
        }
      }),
    );
    const served = results.filter((r) => r.status === 200);
    assert.ok(served.length > 0 && served.every((r) => r.finish === 'length'), JSON.stringify(results.slice(0, 3)));
    assert.ok(results.every((r) => r.status === 200 || r.status === 402));
    for (let tries = 0; tries < 100; tries++) {
      await a.flush();
      if (b !== a) await b.flush();
      const n = await a.sql<{ n: string | number }>('select count(*) as n from budget_holds');
      if (Number(n[0]!.n) === served.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const now = Date.now();
    for (const [key, cap, where, params] of [
      [`instance:*:month:${periodKey('month', now)}`, 500_000, '1 = 1', []],
      [`key:${k1.id}:day:${periodKey('day', now)}`, 300_000, 'key_id = ?', [k1.id]],
    ] as Array<[string, number, string, unknown[]]>) {
      const sum = await charged(a, where, params);
      assert.ok(sum <= cap, `${key}: charged ${sum} > cap ${cap}`);
      assert.is(await total(a, key), sum);
    }
    const rows = await a.sql<{ c: string | number }>('select max(completion_tokens) as c from usage_records');
    assert.is(Number(rows[0]!.c), 100, 'no stream was charged beyond its hold');
  }),
);

test.run();
