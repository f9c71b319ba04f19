import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { countTokens, decode } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ChatRequest } from '../../kernel/index.js';
import { BudgetsConfigSchema } from '../../plugins/budgets/config.js';
import { createRequire } from 'node:module';
import { countText, longRun, maxTokenBytes, mergeCacheEntries } from '../../plugins/budgets/token-count.js';
import { measureInput } from '../../plugins/budgets/input-bound.js';

/** Issue 25 item 1: token counts in linear time, within a per-request budget, never refusing what fits. */
const test = suite('budgets: bounded token counting');
const settings = Value.Default(BudgetsConfigSchema, {}) as typeof BudgetsConfigSchema.static;
const asText = { disallowedSpecial: new Set<string>() };
const chat = (messages: ChatRequest['messages']): Pick<ChatRequest, 'messages'> => ({ messages });

test(`no cl100k token is longer than ${maxTokenBytes} bytes (the lower bound's premise)`, () => {
  let longest = 0;
  for (let id = 0; id < 100_256; id++) {
    try {
      longest = Math.max(longest, Buffer.byteLength(decode([id]), 'utf8'));
    } catch {
      // an unused rank
    }
  }
  assert.is(longest, maxTokenBytes);
});

test('ordinary text is counted exactly; a text with a long run is bounded around its count', () => {
  const prose = 'The quick brown fox jumps over the lazy dog. Ünïcödé, 中文，日本語の文章。 '.repeat(20);
  const c = countText(prose, 100_000);
  assert.equal([c.tokens, c.lower, c.exact], [countTokens(prose, asText), countTokens(prose, asText), true]);
  const withRun = `Look: ${'a'.repeat(5000)} and then the end.`;
  const r = countText(withRun, 100_000);
  const exact = countTokens(withRun, asText);
  assert.is(r.exact, false);
  assert.ok(r.lower <= exact, `lower ${r.lower} ≤ exact ${exact}`);
  assert.ok(Math.abs(r.tokens - exact) <= r.slack, `count ${r.tokens} within ${r.slack} of exact ${exact}`);
});

test('hostile runs are never handed to the tokenizer whole: linear work, certain bounds', () => {
  for (const s of ['a'.repeat(400_000), '['.repeat(400_000), ' '.repeat(400_000), '中'.repeat(400_000), 'xyzzy'.repeat(80_000)]) {
    const c = countText(s, 1_000_000);
    const bytes = Buffer.byteLength(s);
    assert.is(c.lower, Math.max(0, Math.ceil(bytes / maxTokenBytes) - 2), 'one run: certainly one token per 128 bytes');
    // Counted in pieces: close to the whole count (measured on a sample the quadratic count can afford).
    const sample = s.slice(0, 4000);
    const piecewise = countText(sample, 1_000_000);
    const whole = countTokens(sample, asText);
    assert.ok(Math.abs(piecewise.tokens - whole) <= piecewise.slack, `${s[0]}: ${piecewise.tokens} vs ${whole} (slack ${piecewise.slack})`);
    assert.ok(c.tokens <= bytes);
  }
  // Runs of exactly the limit are still counted; one more character and they are bounded.
  assert.is(countText('b'.repeat(longRun), 1000).exact, true);
  assert.is(countText('c'.repeat(longRun + 1), 1000).exact, false);
});

test('a request tokenizes at most tokenizeMaxChars; the rest is bounded by its size', () => {
  const fresh = (i: number) => `message number ${i} says something new: ${'lorem ipsum dolor sit amet '.repeat(200)}`;
  const messages = Array.from({ length: 40 }, (_, i) => ({ role: 'user' as const, content: fresh(i) }));
  const m = measureInput(chat(messages), settings);
  const chars = messages.reduce((a, x) => a + x.content.length, 0);
  assert.ok(chars > 4 * settings.tokenizeMaxChars, 'the request is well past the budget');
  const exact = messages.reduce((a, x) => a + countTokens(x.content, asText), 0);
  assert.ok(m.lower <= exact, 'never more than certain');
  assert.ok(m.tokens >= exact, 'the count (bytes where not tokenized) is at least the exact count');
  assert.ok(m.bound >= m.tokens, 'the hold bound covers the count');
  // The same message list measured again is the same measure (one per request, shared by every phase).
  assert.is(measureInput(chat(messages), settings), m);
});

test('the context check is certain: a 31 MiB run exceeds any window, 200,000 letters may not', () => {
  const huge = measureInput(chat([{ role: 'user', content: 'a'.repeat(31 * 1024 * 1024) }]), settings);
  assert.ok(huge.lower > 128_000);
  const run = measureInput(chat([{ role: 'user', content: 'a'.repeat(200_000) }]), settings);
  assert.ok(run.lower < countTokens('a'.repeat(2000), asText) * 100, 'not refused on a guess');
  assert.ok(run.bound >= countTokens('a'.repeat(2000), asText) * 100, 'held at least at its count');
});

test(`the tokenizer remembers at most ${mergeCacheEntries} pre-tokens' merges, however many distinct words it sees`, () => {
  // The package's own cache (CommonJS build, the one the service loads) would keep 100,000.
  const core = (createRequire(import.meta.url)('gpt-tokenizer/encoding/cl100k_base') as { default: { bytePairEncodingCoreProcessor: { mergeCache?: Map<string, unknown> } } }).default.bytePairEncodingCoreProcessor;
  const words = Array.from({ length: 80_000 }, (_, i) => `zq${i.toString(36)}xv`);
  for (let i = 0; i < words.length; i += 500) countText(words.slice(i, i + 500).join(' '), 1_000_000);
  const size = core.mergeCache?.size ?? 0;
  assert.ok(size > 5_000 && size <= 10_000, `merge cache holds ${size}`);
});

test('counted texts are remembered: a text used again stays through 4,096 new ones, an unused one is forgotten', () => {
  const stamp = `${Date.now()}-${Math.random()}`;
  const hot = `You are a helpful assistant for the travel desk, ${stamp}.`;
  const cold = `A question asked once and never again, ${stamp}.`;
  assert.ok(countText(hot, 32_000).work > 0, 'counted the first time');
  assert.ok(countText(cold, 32_000).work > 0);
  for (let i = 0; i < 5000; i++) {
    countText(`message ${i} of a long conversation, ${stamp}`, 32_000);
    // A system prompt resent every turn: a hit only flags the entry, eviction gives it a second chance.
    if (i % 100 === 0) assert.is(countText(hot, 32_000).work, 0, `still remembered after ${i} new texts`);
  }
  assert.is(countText(hot, 32_000).work, 0, 'the text used again was kept');
  assert.ok(countText(cold, 32_000).work > 0, 'the text never used again was evicted and counted anew');
});

test.run();
