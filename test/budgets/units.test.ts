import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { CountersMissing, type CatalogModel, type ChatRequest } from '../../kernel/index.js';
import { MemoryCache } from '../../kernel/cache/memory.js';
import { BudgetsConfigSchema } from '../../plugins/budgets/config.js';
import { periodKey, periodEnd, counterTtlMs } from '../../plugins/budgets/periods.js';
import { holdMicroUsd, isFree } from '../../plugins/budgets/hold-amount.js';
import { inputTokenBound, pdfPages, textTokenBound } from '../../plugins/budgets/input-bound.js';
import { applicableCaps, cappedTotalKeys, chargedTotalKeys, indexCaps, type Cap } from '../../plugins/budgets/caps.js';
import { capLines, counterKey, decodeTrack, encodeTrack, heldTotals, moveLines } from '../../plugins/budgets/reservation.js';
import { crossed, signature } from '../../plugins/budgets/alerts.js';
import { rateLine, retryAfter, rateLimited, windowEndOf } from '../../plugins/rate-limit/window.js';

const test = suite('budgets: pure parts');
const settings = Value.Default(BudgetsConfigSchema, {}) as typeof BudgetsConfigSchema.static;

const model = (over: Partial<CatalogModel> = {}): CatalogModel => ({
  name: 'p:m', provider: 'p', upstreamId: 'm', displayName: 'm', contextWindow: 128_000, outputLimit: 4096,
  inputMicroUsdPerMTok: 2_500_000, outputMicroUsdPerMTok: 10_000_000, canReadImages: true, canReadPdf: true, canCallTools: true,
  createdAt: new Date(0), ...over,
});
const chat = (messages: ChatRequest['messages'], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'p:m', messages, stream: false, includeUsage: false, ...extra });

test('period keys: UTC day, ISO week (Monday), calendar month, lifetime', () => {
  const t = Date.UTC(2026, 10, 23, 23, 59, 59); // Monday
  assert.is(periodKey('day', t), '2026-11-23');
  assert.is(periodKey('month', t), '2026-11');
  assert.is(periodKey('lifetime', t), 'all');
  assert.is(periodKey('week', t), '2026-W48');
  assert.is(periodKey('week', Date.UTC(2026, 0, 1)), '2026-W01'); // a Thursday
  assert.is(periodKey('week', Date.UTC(2027, 0, 1)), '2026-W53'); // a Friday: still the last week of 2026
  assert.is(periodKey('week', Date.UTC(2024, 11, 30)), '2025-W01'); // a Monday in December
  assert.is(periodKey('week', Date.UTC(2026, 10, 22, 23)), '2026-W47'); // Sunday belongs to the week before
  assert.is(periodEnd('day', t), Date.UTC(2026, 10, 24));
  assert.is(periodEnd('week', Date.UTC(2026, 10, 26)), Date.UTC(2026, 10, 30));
  assert.is(periodEnd('month', Date.UTC(2026, 11, 31, 12)), Date.UTC(2027, 0, 1));
  assert.is(periodEnd('lifetime', t), null);
  assert.is(counterTtlMs('day', t, 1000), 2000);
  assert.is(counterTtlMs('lifetime', t, 1000), undefined);
});

test('hold: input bound at the input price plus the output limit at the output price, rounded up', () => {
  const m = model();
  // 1000 × 2.5 + 4096 × 10 (micro-USD per token) = 2500 + 40960
  assert.is(holdMicroUsd(m, 1000, undefined), 43_460);
  assert.is(holdMicroUsd(m, 1000, 100), 3500);
  assert.is(holdMicroUsd(model({ inputMicroUsdPerMTok: 1, outputMicroUsdPerMTok: 1 }), 1, 1), 1); // 2e-6 rounds up to 1
  assert.is(holdMicroUsd(model({ contextWindow: 500 }), 1000, 100), 2250); // a provider bills no more than the window
  assert.ok(isFree(model({ inputMicroUsdPerMTok: 0, outputMicroUsdPerMTok: 0 })));
  assert.is(holdMicroUsd(model({ inputMicroUsdPerMTok: 0, outputMicroUsdPerMTok: 0 }), 10_000, 100), 0);
  assert.not.ok(isFree(model({ inputMicroUsdPerMTok: 0 })));
});

test('input bound: tokenizer count with margin, never under 4 characters a token; specials are text', () => {
  const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
  const b = textTokenBound(prose, settings);
  assert.ok(b >= Math.ceil(prose.length / 4), `bound ${b}`);
  assert.ok(textTokenBound(' '.repeat(4000), settings) >= 1000, 'whitespace runs: the 4-chars rule');
  assert.ok(textTokenBound('<|endoftext|> <|im_start|>', settings) > 2);
  const big = 'é'.repeat(settings.tokenizeMaxChars + 1);
  assert.is(textTokenBound(big, settings), Buffer.byteLength(big));
  assert.is(textTokenBound('', settings), 0);
});

test('input bound: messages, tools, images and PDF pages', () => {
  const base = inputTokenBound(chat([{ role: 'user', content: 'hi' }]), settings);
  assert.is(base, settings.requestOverheadTokens + settings.messageOverheadTokens + 2); // 'hi' is 1 token, ×1.25 rounds up to 2
  const png = 'data:image/png;base64,' + Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
  const withImage = inputTokenBound(chat([{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: png } }] }]), settings);
  assert.is(withImage - base, settings.imageTokens);
  const pdf = 'data:application/pdf;base64,' + Buffer.from('%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>').toString('base64');
  assert.is(pdfPages(pdf), 2);
  const withPdf = inputTokenBound(chat([{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'file', file: { filename: 'a.pdf', file_data: pdf } }] }]), settings);
  assert.is(withPdf - base, 2 * settings.pdfPageTokens);
  const compressed = 'data:application/pdf;base64,' + Buffer.alloc(5000, 1).toString('base64');
  assert.is(pdfPages(compressed), 3, 'no page objects visible: one page per 2 KB');
  const tools = inputTokenBound(chat([{ role: 'user', content: 'hi' }], { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] }), settings);
  assert.ok(tools > base + 5);
});

const cap = (over: Partial<Cap>): Cap => ({ id: 'c', scope: 'instance', workspaceId: '', subjectId: '', amountMicroUsd: 1_000_000, period: 'month', thresholds: [50, 80, 100], ...over });

test('caps: the scopes of a request, counters seeded from known totals, one line per counter', () => {
  const caps = [
    cap({ id: 'i' }),
    cap({ id: 'w', scope: 'workspace', workspaceId: 'w1', period: 'day' }),
    cap({ id: 'm', scope: 'member', workspaceId: 'w1', subjectId: 'p1', period: 'lifetime' }),
    cap({ id: 'k', scope: 'key', workspaceId: 'w1', subjectId: 'k1', period: 'week' }),
    cap({ id: 'other', scope: 'member', workspaceId: 'w2', subjectId: 'p1' }),
  ];
  const index = indexCaps(caps);
  const t = Date.UTC(2026, 10, 23, 12);
  assert.equal(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }).map((c) => c.id), ['k', 'm', 'w', 'i']);
  assert.equal(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: null }).map((c) => c.id), ['m', 'w', 'i']);
  const lines = capLines(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }), 500, t, 1000);
  assert.equal(lines.map((l) => l.key), [
    counterKey('key:k1:week:2026-W48'), counterKey('member:w1/p1:lifetime:all'), counterKey('workspace:w1:day:2026-11-23'), counterKey('instance:*:month:2026-11'),
  ]);
  assert.equal([lines[1]!.seed, lines[1]!.mustExist], [undefined, true], 'a missing counter is reported, never started from zero');
  assert.is(lines[1]!.ttlMs, undefined);
  assert.is(lines[2]!.ttlMs, 12 * 3600_000 + 1000);
  const dup = capLines([cap({ id: 'a', amountMicroUsd: 9 }), cap({ id: 'b', amountMicroUsd: 5 })], 1, t, 0);
  assert.is(dup.length, 1);
  assert.is(dup[0]!.limit, 5);
  const charged = chargedTotalKeys({ workspaceId: 'w1', personId: 'p1', keyId: 'k1' }, t);
  assert.is(charged.length, 16);
  // The totals read back after a commit: the capped ones, in the charged order; the same list until the caps change.
  const capped = cappedTotalKeys(caps, charged);
  assert.equal(capped, ['instance:*:month:2026-11', 'workspace:w1:day:2026-11-23', 'member:w1/p1:lifetime:all', 'key:k1:week:2026-W48']);
  assert.is(cappedTotalKeys(caps, charged), capped);
  assert.equal(cappedTotalKeys([...caps], charged), capped);
  assert.equal(cappedTotalKeys([], charged), []);
  // The hold's totals list follows the lines, and is one shared array for the day.
  const held = heldTotals(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }), t);
  assert.equal(held, lines.map((l) => [l.total, l.cap.period]));
  assert.is(heldTotals(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }), t + 1000), held);
  assert.is.not(heldTotals(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }), t + 86_400_000), held, 'a new day, new period keys');
  assert.is.not(capLines(applicableCaps(index, { workspaceId: 'w1', personId: 'p1', keyId: 'k1' }), 500, t, 1000)[0], lines[0], 'fresh line objects every call');
});

test('a hold record encodes as JSON.stringify would, and decodes back', () => {
  const k: Array<[string, 'day' | 'month']> = [['key:k1:day:2026-11-28', 'day'], ['instance:*:month:2026-11', 'month']];
  for (const y of ['k1', null]) {
    const h = { i: '0193-id', a: 1234, k, r: 'req "quoted" \\ ü', w: 'w1', p: 'p1', y, m: 'openai:gpt-4o-mini', t: 1_764_000_000_123 };
    assert.is(encodeTrack(h), JSON.stringify(h));
    assert.equal(decodeTrack(encodeTrack(h)), h);
  }
});

test("a hold's totals are written as scope.period pairs when they are its own ids' totals, and read back in full; the list form still reads", () => {
  const t = Date.UTC(2026, 10, 23, 12);
  const k: Array<[string, 'day' | 'week' | 'month' | 'lifetime']> = [
    ['key:k1:week:2026-W48', 'week'], ['member:w1/p1:lifetime:all', 'lifetime'], ['workspace:w1:day:2026-11-23', 'day'], ['instance:*:month:2026-11', 'month'],
  ];
  const h = { i: '0193-id', a: 1234, k, r: 'req_1', w: 'w1', p: 'p1', y: 'k1', m: 'openai:gpt-4o-mini', t };
  const member = encodeTrack(h);
  assert.equal(JSON.parse(member).k, 'key.week,member.lifetime,workspace.day,instance.month');
  assert.ok(member.length < JSON.stringify(h).length - 60, 'shorter than the list');
  assert.equal(decodeTrack(member), h);
  // A member written with the list (before, or a list that is not the hold's own) reads as it is.
  assert.equal(decodeTrack(JSON.stringify(h)), h);
  const foreign = { ...h, k: [['workspace:w9:day:2026-11-23', 'day']] as Array<[string, 'day']> };
  assert.is(encodeTrack(foreign), JSON.stringify(foreign));
  // A code naming what is not a scope or period is not a hold of ours.
  assert.is(decodeTrack(JSON.stringify({ ...h, k: 'team.day' })), null);
  assert.is(decodeTrack(JSON.stringify({ ...h, k: 'key.year' })), null);
  assert.is(decodeTrack(JSON.stringify({ ...h, y: null, k: 'key.day' })), null, 'a key total for a hold without a key');
});

test('reservation: all or nothing, settle moves by charge − hold, a missing counter is reported and changes nothing', async () => {
  const cache = new MemoryCache();
  const t = Date.now();
  const lines = capLines([cap({ amountMicroUsd: 1000 })], 600, t, 0);
  const missing = await cache.reserve(lines).catch((err: unknown) => err);
  assert.instance(missing, CountersMissing);
  assert.equal((missing as CountersMissing).lines, [0]);
  assert.is(await cache.get(lines[0]!.key), null, 'nothing was seeded or added');
  lines[0]!.seed = 100;
  assert.ok((await cache.reserve(lines)).ok);
  const refused = await cache.reserve(lines);
  assert.equal(refused, { ok: false, index: 0, current: 700, ttlMs: (refused as { ttlMs: number }).ttlMs });
  const k: Array<[string, 'month']> = [[lines[0]!.total, 'month']];
  assert.equal(await cache.adjust(moveLines(k, 250 - 600, t, 0)), [350]);
  await cache.del(lines[0]!.key);
  const lost = await cache.adjust(moveLines(k, 250 - 600, t, 0), { key: 'holds', member: 'h' }).catch((err: unknown) => err);
  assert.instance(lost, CountersMissing);
  const h = { i: 'h', a: 1, k, r: 'r', w: 'w', p: 'p', y: null, m: 'p:m', t };
  assert.equal(decodeTrack(encodeTrack(h)), h);
  assert.is(decodeTrack('not json'), null);
});

test('alerts: thresholds crossed upward once; HMAC-SHA256 signature', () => {
  const c = cap({ amountMicroUsd: 1000, thresholds: [50, 80, 100] });
  assert.equal(crossed(c, 0, 499), []);
  assert.equal(crossed(c, 499, 500), [50]);
  assert.equal(crossed(c, 400, 1200), [50, 80, 100]);
  assert.equal(crossed(c, 800, 900), []);
  assert.is(signature('key', 'The quick brown fox jumps over the lazy dog'), 'sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
  assert.match(signature('secret', '{}'), /^sha256=[0-9a-f]{64}$/);
});

test('rate limit: fixed window per person; Retry-After rounds up', () => {
  const t = 120_500;
  const l = rateLine('p1', { requests: 3, windowMs: 60_000 }, t);
  assert.equal(l, { key: 'rl:p1:2', amount: 1, limit: 3, ttlMs: 59_500 });
  assert.is(windowEndOf(t, { requests: 3, windowMs: 60_000 }), 180_000);
  assert.equal(retryAfter(1500, 0, 0), { ms: 1500, seconds: 2 });
  assert.equal(retryAfter(-2, 180_000, 179_999), { ms: 1, seconds: 1 });
  const e = rateLimited({ ms: 1500, seconds: 2 }, { requests: 3, windowMs: 60_000 });
  assert.is(e.status, 429);
  assert.is(e.type, 'rate_limit_error');
  assert.equal(e.details, { retry_after_seconds: 2 });
  assert.equal(e.headers, { 'retry-after': '2', 'retry-after-ms': '1500' });
});

test.run();
