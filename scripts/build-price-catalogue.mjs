#!/usr/bin/env node
// Builds plugins/catalog/catalogue/models.json, the priced models of the eight built-in providers,
// from LiteLLM's public price list (model_prices_and_context_window.json, MIT licence).
//
//   node scripts/build-price-catalogue.mjs [path/to/model_prices_and_context_window.json] [--as-of YYYY-MM-DD] [--out file]
//
// Default input: ../shared/data/model_prices_and_context_window.json (relative to the repo). The
// output is committed; the service never reads the source list at run time.
//
// SPEC.md pricing rules applied (prices are integer micro-USD per million tokens):
//  1. entered prices are what is held and charged: the list's per-token prices × 10^12;
//  2. several entries for one model (e.g. `gemini-2.5-pro` and `gemini/gemini-2.5-pro`): the highest;
//  3. tiers (`*_above_200k_tokens` and the like): the highest tier;
//  4. cached input is charged at the input price: cache read/creation prices are ignored;
//  5. reasoning counts as output: `output_cost_per_reasoning_token` raises the output price if higher;
//  6. suffixed variants (`gpt-4o-2024-08-06`, `:free`, `-latest`) stay separate models.
// Service tiers the gateway never asks for (priority, flex, batches) are ignored.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const asOfAt = args.indexOf('--as-of');
const asOf = asOfAt >= 0 ? args.splice(asOfAt, 2)[1] : new Date().toISOString().slice(0, 10);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? resolve(args.splice(outAt, 2)[1]) : resolve(repo, 'plugins/catalog/catalogue/models.json');
const source = resolve(args[0] ?? resolve(repo, '../../shared/data/model_prices_and_context_window.json'));

/** LiteLLM's provider label → the built-in provider name, and the key prefix to strip from ids. */
const vendors = {
  openai: { name: 'openai', prefix: 'openai/' },
  anthropic: { name: 'anthropic', prefix: 'anthropic/' },
  gemini: { name: 'google', prefix: 'gemini/' },
  mistral: { name: 'mistral', prefix: 'mistral/' },
  groq: { name: 'groq', prefix: 'groq/' },
  deepseek: { name: 'deepseek', prefix: 'deepseek/' },
  xai: { name: 'xai', prefix: 'xai/' },
  openrouter: { name: 'openrouter', prefix: 'openrouter/' },
};

const tierOnly = /_(priority|flex|batches)$/;
const micro = (perToken) => Math.round(Number((perToken * 1e12).toPrecision(12)));

/** The highest of the fields that apply: the base price and any size tier, never a service tier. */
function highest(entry, base, extra = []) {
  const prices = Object.entries(entry)
    .filter(([k, v]) => typeof v === 'number' && (k === base || (k.startsWith(`${base}_above_`) && !tierOnly.test(k)) || extra.includes(k)))
    .map(([, v]) => v);
  return prices.length ? micro(Math.max(...prices)) : null;
}

function model(id, e) {
  const context = e.max_input_tokens ?? e.max_tokens;
  const output = e.max_output_tokens ?? e.max_tokens;
  if (!Number.isInteger(context) || !Number.isInteger(output) || context < 1 || output < 1) return undefined;
  return {
    id,
    context_window: context,
    output_limit: Math.min(output, context),
    input_micro_usd_per_mtok: highest(e, 'input_cost_per_token'),
    output_micro_usd_per_mtok: highest(e, 'output_cost_per_token', ['output_cost_per_reasoning_token']),
    images: e.supports_vision === true,
    pdf: e.supports_pdf_input === true,
    tools: e.supports_function_calling === true,
  };
}

/** Two entries for the same model: the higher price of each kind, the smaller limits, capabilities both declare. */
function merge(a, b) {
  const max = (x, y) => (x === null || y === null ? (x ?? y) : Math.max(x, y));
  return {
    id: a.id,
    context_window: Math.min(a.context_window, b.context_window),
    output_limit: Math.min(a.output_limit, b.output_limit),
    input_micro_usd_per_mtok: max(a.input_micro_usd_per_mtok, b.input_micro_usd_per_mtok),
    output_micro_usd_per_mtok: max(a.output_micro_usd_per_mtok, b.output_micro_usd_per_mtok),
    images: a.images && b.images,
    pdf: a.pdf && b.pdf,
    tools: a.tools && b.tools,
  };
}

const list = JSON.parse(readFileSync(source, 'utf8'));
const providers = Object.fromEntries(Object.values(vendors).map((v) => [v.name, new Map()]));
let skipped = 0;
for (const [key, e] of Object.entries(list)) {
  const vendor = vendors[e?.litellm_provider];
  if (!vendor || e.mode !== 'chat' || key.startsWith('ft:')) continue;
  if (typeof e.deprecation_date === 'string' && e.deprecation_date < asOf) {
    skipped++;
    continue;
  }
  const id = key.startsWith(vendor.prefix) ? key.slice(vendor.prefix.length) : key;
  const m = model(id, e);
  if (!m) {
    skipped++;
    continue;
  }
  const seen = providers[vendor.name].get(id);
  providers[vendor.name].set(id, seen ? merge(seen, m) : m);
}

const catalogue = {
  source: 'LiteLLM model_prices_and_context_window.json (MIT licence), snapshot of 2026-08',
  built: asOf,
  providers: Object.fromEntries(Object.entries(providers).map(([name, models]) => [name, [...models.values()].sort((a, b) => a.id.localeCompare(b.id))])),
};
// One model per line keeps the committed file's diffs readable when prices change.
const lines = Object.entries(catalogue.providers).map(
  ([name, models]) => `    ${JSON.stringify(name)}: [\n${models.map((m) => `      ${JSON.stringify(m)}`).join(',\n')}\n    ]`,
);
writeFileSync(out, `{\n  "source": ${JSON.stringify(catalogue.source)},\n  "built": ${JSON.stringify(asOf)},\n  "providers": {\n${lines.join(',\n')}\n  }\n}\n`);
const counts = Object.entries(catalogue.providers).map(([n, m]) => `${n} ${m.length}`).join(', ');
console.log(`price catalogue: ${counts} (${skipped} deprecated or without limits skipped) → ${out}`);
