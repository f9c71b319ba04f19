import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { packageRoot } from '../../kernel/paths.js';

type Entry = { id: string; context_window: number; output_limit: number; input_micro_usd_per_mtok: number | null; output_micro_usd_per_mtok: number | null; images: boolean; pdf: boolean; tools: boolean };
type Catalogue = { providers: Record<string, Entry[]> };

const test = suite('price catalogue build (SPEC.md pricing rules)');
const script = resolve(packageRoot, 'scripts/build-price-catalogue.mjs');
const dir = mkdtempSync(join(tmpdir(), 'svc-catalogue-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the real script on a small list in LiteLLM's format. */
function build(list: Record<string, unknown>): Catalogue {
  const input = join(dir, 'in.json');
  const out = join(dir, 'out.json');
  writeFileSync(input, JSON.stringify(list));
  execFileSync(process.execPath, [script, input, '--as-of', '2026-11-22', '--out', out], { stdio: 'pipe' });
  return JSON.parse(readFileSync(out, 'utf8')) as Catalogue;
}

const chat = (provider: string, extra: Record<string, unknown>) => ({ litellm_provider: provider, mode: 'chat', max_input_tokens: 100_000, max_output_tokens: 8000, ...extra });

test('per-token prices become micro-USD per million tokens; capabilities and limits carried over; ids lose the vendor prefix', () => {
  const c = build({
    'gpt-x': chat('openai', { input_cost_per_token: 0.0000025, output_cost_per_token: 0.00001, supports_vision: true, supports_pdf_input: true, supports_function_calling: true }),
    'gemini/gemini-x': chat('gemini', { input_cost_per_token: 1.25e-7, output_cost_per_token: 5e-7 }),
    'openrouter/anthropic/claude-x': chat('openrouter', { input_cost_per_token: 0.000003, output_cost_per_token: 0.000015 }),
    'text-embedding-x': { litellm_provider: 'openai', mode: 'embedding', input_cost_per_token: 1e-7 },
    'ft:gpt-x:org': chat('openai', { input_cost_per_token: 1e-6, output_cost_per_token: 1e-6 }),
  });
  assert.equal(c.providers.openai, [{ id: 'gpt-x', context_window: 100_000, output_limit: 8000, input_micro_usd_per_mtok: 2_500_000, output_micro_usd_per_mtok: 10_000_000, images: true, pdf: true, tools: true }]);
  assert.equal(c.providers.google?.map((m) => [m.id, m.input_micro_usd_per_mtok, m.output_micro_usd_per_mtok]), [['gemini-x', 125_000, 500_000]]);
  assert.equal(c.providers.openrouter?.map((m) => m.id), ['anthropic/claude-x']);
});

test('rules: the above-threshold tier, the highest of several entries, cache prices ignored, reasoning as output, service tiers ignored, suffixed variants separate', () => {
  const c = build({
    'gemini/tiered': chat('gemini', { input_cost_per_token: 1.25e-6, input_cost_per_token_above_200k_tokens: 2.5e-6, output_cost_per_token: 1e-5, output_cost_per_token_above_200k_tokens: 1.5e-5, cache_read_input_token_cost: 1e-7 }),
    'mistral/dup': chat('mistral', { input_cost_per_token: 1e-6, output_cost_per_token: 3e-6 }),
    'dup': chat('mistral', { input_cost_per_token: 2e-6, output_cost_per_token: 2e-6, max_input_tokens: 32_000 }),
    'xai/thinker': chat('xai', { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6, output_cost_per_reasoning_token: 4e-6, input_cost_per_token_priority: 9e-6 }),
    'xai/thinker-latest': chat('xai', { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6 }),
    'anthropic/cached': chat('anthropic', { input_cost_per_token: 3e-6, output_cost_per_token: 1.5e-5, cache_creation_input_token_cost: 3.75e-6 }),
    'deepseek/old': chat('deepseek', { input_cost_per_token: 1e-6, output_cost_per_token: 1e-6, deprecation_date: '2026-01-01' }),
    'groq/unpriced': chat('groq', {}),
  });
  const price = (p: string, id: string) => {
    const m = c.providers[p]?.find((e) => e.id === id);
    return m && [m.input_micro_usd_per_mtok, m.output_micro_usd_per_mtok];
  };
  assert.equal(price('google', 'tiered'), [2_500_000, 15_000_000]);
  assert.equal(price('mistral', 'dup'), [2_000_000, 3_000_000]);
  assert.is(c.providers.mistral?.find((e) => e.id === 'dup')?.context_window, 32_000);
  assert.equal(price('xai', 'thinker'), [1_000_000, 4_000_000]);
  assert.equal(price('xai', 'thinker-latest'), [1_000_000, 2_000_000]);
  assert.equal(price('anthropic', 'cached'), [3_000_000, 15_000_000]);
  assert.equal(c.providers.deepseek, []);
  assert.equal(price('groq', 'unpriced'), [null, null]);
});

test('the committed catalogue is what the script builds from the shared list (when that list is present)', () => {
  const shared = resolve(packageRoot, '../../shared/data/model_prices_and_context_window.json');
  let source: string;
  try {
    source = readFileSync(shared, 'utf8');
  } catch {
    return; // a clone without the shared data: the committed file stands as built
  }
  const out = join(dir, 'full.json');
  const input = join(dir, 'full-in.json');
  writeFileSync(input, source);
  const committed = JSON.parse(readFileSync(resolve(packageRoot, 'plugins/catalog/catalogue/models.json'), 'utf8')) as Catalogue & { built: string };
  execFileSync(process.execPath, [script, input, '--as-of', committed.built, '--out', out], { stdio: 'pipe' });
  assert.equal(JSON.parse(readFileSync(out, 'utf8')), committed);
  const gpt = committed.providers.openai?.find((m) => m.id === 'gpt-4o');
  assert.equal([gpt?.input_micro_usd_per_mtok, gpt?.output_micro_usd_per_mtok, gpt?.images, gpt?.tools], [2_500_000, 10_000_000, true, true]);
  const pro = committed.providers.google?.find((m) => m.id === 'gemini-2.5-pro');
  assert.equal([pro?.input_micro_usd_per_mtok, pro?.output_micro_usd_per_mtok], [2_500_000, 15_000_000]);
  for (const name of ['openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek', 'xai', 'openrouter']) assert.ok((committed.providers[name]?.length ?? 0) > 0, name);
});

test.run();
