import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as r50k } from 'gpt-tokenizer/encoding/r50k_base';
import { BudgetsConfigSchema } from '../../plugins/budgets/config.js';
import { inputTokenBound } from '../../plugins/budgets/input-bound.js';
import { holdMicroUsd } from '../../plugins/budgets/hold-amount.js';
import { chargeMicroUsd, type CatalogModel } from '../../kernel/index.js';
import { corpus } from './corpus.js';

/**
 * How often a hold falls short of the final charge (README "Hold accuracy"). The bound counts with
 * o200k and cl100k; the "provider" counts with o200k, cl100k, the 4-characters rule, and r50k
 * (GPT-3-era: a stand-in for an old small-vocabulary tokenizer that counts far more for CJK,
 * non-Latin scripts and whitespace runs), plus each message's framing (4 tokens) and the reply
 * priming (3), as OpenAI documents them. The output part of a hold is the max tokens, which a
 * provider never exceeds, so a hold falls short exactly when its input bound does.
 */
const test = suite('budgets: hold accuracy on a varied corpus');
const settings = Value.Default(BudgetsConfigSchema, {}) as typeof BudgetsConfigSchema.static;
const asText = { disallowedSpecial: new Set<string>() };
const providers = {
  o200k: (s: string) => o200k(s, asText),
  cl100k: (s: string) => cl100k(s, asText),
  r50k: (s: string) => r50k(s, asText),
  'chars/4': (s: string) => Math.ceil(s.length / 4),
};
const model: CatalogModel = {
  name: 'p:m', provider: 'p', upstreamId: 'm', displayName: 'm', contextWindow: 1_000_000, outputLimit: 1024,
  inputMicroUsdPerMTok: 2_500_000, outputMicroUsdPerMTok: 10_000_000, canReadImages: true, canReadPdf: true, canCallTools: true, createdAt: new Date(0),
};

test('holds cover the charge for every sample under o200k, cl100k and chars/4 counting; r50k measured', () => {
  const samples = corpus();
  const rows: Record<string, Record<string, { n: number; short: number; worst: number; slack: number }>> = {};
  for (const s of samples) {
    const bound = inputTokenBound({ messages: s.messages.map((content) => ({ role: 'user', content })) }, settings);
    const hold = holdMicroUsd(model, bound, 256);
    for (const [name, count] of Object.entries(providers)) {
      const provider = s.messages.reduce((n, m) => n + count(m) + 4, 3);
      const charge = chargeMicroUsd(model, { prompt_tokens: provider, completion_tokens: 256 });
      const r = ((rows[name] ??= {})[s.category] ??= { n: 0, short: 0, worst: 0, slack: 0 });
      r.n++;
      if (charge > hold) r.short++;
      r.worst = Math.max(r.worst, provider / bound);
      r.slack += bound / provider;
    }
  }
  const table = Object.entries(rows).flatMap(([provider, cats]) =>
    Object.entries(cats).map(([category, r]) => `${provider.padEnd(8)} ${category.padEnd(13)} short ${String(r.short).padStart(2)}/${r.n}  worst provider/bound ${r.worst.toFixed(2)}  mean bound/provider ${(r.slack / r.n).toFixed(2)}`),
  );
  if (process.env.SVC_PRINT_ACCURACY) console.log(`\n${table.join('\n')}`);
  for (const p of ['o200k', 'cl100k', 'chars/4']) {
    const short = Object.values(rows[p]!).reduce((n, r) => n + r.short, 0);
    assert.is(short, 0, `${p}: ${short} holds short\n${table.join('\n')}`);
  }
  assert.is(samples.length, 400);
});

test.run();
