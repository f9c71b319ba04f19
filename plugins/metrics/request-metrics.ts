import type { Registry } from 'prom-client';
import { chargeMicroUsd, type CatalogService, type RequestContext } from '../../kernel/index.js';
import { CounterFamily, HistogramFamily } from './families.js';

/** Seconds: model replies take from a fraction of a second to minutes. */
const latencyBounds = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
const firstChunkBounds = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];
const classifierBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/**
 * `chargeMicroUsd` (kernel/contracts/pricing.ts) without its BigInts while the product is a safe
 * integer (every real request): the same rounding up to a whole micro-USD, in exact integer
 * arithmetic on doubles (`%` and the division of a multiple are exact below 2^53).
 */
export function charge(model: { inputMicroUsdPerMTok: number | null; outputMicroUsdPerMTok: number | null }, usage: { prompt_tokens: number; completion_tokens: number }): number {
  const total = Math.max(0, usage.prompt_tokens) * (model.inputMicroUsdPerMTok ?? 0) + Math.max(0, usage.completion_tokens) * (model.outputMicroUsdPerMTok ?? 0);
  if (!Number.isSafeInteger(total)) return chargeMicroUsd(model, usage);
  const rest = total % 1_000_000;
  return (total - rest) / 1_000_000 + (rest > 0 ? 1 : 0);
}

/** Status codes as label values, made once each (String(status) per request would allocate). */
const statusText: string[] = [];
const statusLabel = (status: number): string => (statusText[status] ??= String(status));

/**
 * What every settled model request adds to the metrics (README "Metrics"): read from what the
 * pipeline left on the request (state.outcome, selection, hold), never from another plugin.
 * Label values are catalog names, route names, rules, status and error codes: bounded by the
 * instance's configuration, never person, key or workspace ids.
 */
export class RequestMetrics {
  readonly requests = new CounterFamily('svc_requests_total', 'Model requests settled, by model, route, routing rule, HTTP status and error code.', ['model', 'route', 'routing_rule', 'status', 'error_code']);
  readonly duration = new HistogramFamily('svc_request_duration_seconds', 'Time from arrival to the end of the reply, by model.', ['model'], latencyBounds);
  readonly firstChunk = new HistogramFamily('svc_time_to_first_chunk_seconds', 'Time from arrival to the first chunk of a streamed reply, by model.', ['model'], firstChunkBounds);
  readonly attempts = new CounterFamily('svc_upstream_attempts_total', 'Upstream model calls, by provider and outcome (ok, aborted or the error code).', ['provider', 'outcome']);
  readonly retries = new CounterFamily('svc_upstream_retries_total', 'Upstream calls that repeated a transient failure on the same model, by provider.', ['provider']);
  readonly fallbacks = new CounterFamily('svc_upstream_fallbacks_total', 'Moves to the next candidate model after a failed call, by the provider that failed.', ['provider']);
  readonly spend = new CounterFamily('svc_spend_micro_usd_total', 'Charged spend in micro-USD, by provider and model (the usage records\u2019 charges).', ['provider', 'model']);
  readonly held = new CounterFamily('svc_held_micro_usd_total', 'Budget holds of settled requests in micro-USD (what was reserved before the call), by provider and model.', ['provider', 'model']);
  readonly rateLimited = new CounterFamily('svc_rate_limit_refusals_total', 'Model requests refused 429 rate_limited by the per-person rate limit.', []);
  readonly decisions = new CounterFamily('svc_routing_decisions_total', 'Automatic routing decisions (auto, route/<name> excluded), by rule, reason and route.', ['rule', 'reason', 'route']);
  readonly classifier = new HistogramFamily('svc_classifier_duration_seconds', 'Time the routing classifier took to score a request.', [], classifierBounds);

  constructor(private readonly catalog: () => CatalogService | undefined) {}

  register(registry: Registry): void {
    for (const f of [this.requests, this.duration, this.firstChunk, this.attempts, this.retries, this.fallbacks, this.spend, this.held, this.rateLimited, this.decisions, this.classifier]) f.register(registry);
  }

  /** The settle hook: a few map lookups and additions, nothing allocated once each series exists. */
  observe(rc: RequestContext): void {
    const { state } = rc;
    const outcome = state.outcome;
    const model = state.model ?? state.candidates[0];
    const modelName = model?.name ?? '';
    const selection = state.selection;
    const status = outcome ? (outcome.clientClosed && outcome.status === 0 ? 499 : outcome.status) : 0;
    const errorCode = outcome?.errorCode ?? '';
    this.requests.inc(1, modelName, selection?.route ?? '', selection?.rule ?? '', statusLabel(status), errorCode);
    // The end of the last phase that ran (dispatch, or the one that refused): the reply's end,
    // already measured by the pipeline, so no clock read (and its boxed double) here.
    const endMs = rc.phases?.lastEnd() ?? performance.now() - rc.startedAt;
    this.duration.observe(endMs / 1000, modelName);
    // Streams only: a whole reply's "first token" is its whole body, already in the duration.
    if (state.chat?.stream && outcome?.firstTokenMs !== null && outcome?.firstTokenMs !== undefined) this.firstChunk.observe(outcome.firstTokenMs / 1000, modelName);
    if (errorCode === 'rate_limited' && !outcome?.sent) this.rateLimited.inc(1);
    if (selection && selection.rule !== 'explicit') this.decisions.inc(1, selection.rule, selection.reason ?? '', selection.route ?? '');
    if (selection?.classifierMs !== undefined) this.classifier.observe(selection.classifierMs / 1000);
    const attempts = outcome?.attempts;
    if (attempts) {
      for (let i = 0; i < attempts.length; i++) {
        const a = attempts[i]!;
        this.attempts.inc(1, a.provider, a.outcome);
        if (a.retry) this.retries.inc(1, a.provider);
        const next = attempts[i + 1];
        if (next && a.outcome !== 'ok' && next.model !== a.model) this.fallbacks.inc(1, a.provider);
      }
    }
    const calls = outcome?.sent ? outcome.modelCalls : undefined;
    if (calls) {
      const catalog = this.catalog();
      for (let i = 0; i < calls.length; i++) {
        const c = calls[i]!;
        const micro = charge(c.model, c.usage);
        if (micro > 0) this.spend.inc(micro, catalog?.model(c.model.name)?.provider ?? model?.provider ?? '', c.model.name);
      }
    }
    const hold = state.hold;
    if (hold && hold.amountMicroUsd > 0) this.held.inc(hold.amountMicroUsd, model?.provider ?? '', modelName);
  }
}
