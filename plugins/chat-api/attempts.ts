import {
  GatewayError,
  toGatewayError,
  type ProviderRegistry,
  type CatalogModel,
  type RequestContext,
  type UpstreamCall,
  type RequestSignal,
} from '../../kernel/index.js';
import type { Cooldown } from './cooldown.js';
import { contextError, tooLong } from './context-fit.js';
import { backoffMs, fallbackCodes, isDeadline, isTransient, pause, requestedWaitMs, retryAfterDeadline, type UpstreamConfig } from './retry-policy.js';
import { metered } from './metered.js';
import { streamReply, wholeReply, type ReplyEnv } from './replies.js';

export interface AttemptEnv extends ReplyEnv {
  registry: ProviderRegistry;
  config: UpstreamConfig;
  cooldown: Cooldown;
}


/** The held model, then the other candidates in order, each only if it can give `maxTokens` (one array, no copies). */
function candidateChain(first: CatalogModel, candidates: readonly CatalogModel[], maxTokens: number | undefined): readonly CatalogModel[] {
  // The list itself when it already is the chain (an explicit model: one that can give maxTokens).
  if (candidates.length === 1 && candidates[0] === first && (maxTokens === undefined || maxTokens <= first.outputLimit)) return candidates;
  const chain: CatalogModel[] = [];
  if (maxTokens === undefined || maxTokens <= first.outputLimit) chain.push(first);
  for (const m of candidates) if (m !== first && (maxTokens === undefined || maxTokens <= m.outputLimit)) chain.push(m);
  return chain;
}

/**
 * The attempt loop of the dispatch phase (README "When the upstream fails"), for every selection:
 * each candidate in order (the held model, then the route's fallbacks the hold covers), each tried
 * up to 1 + `retries` times while its failures are transient and nothing reached the client, with
 * backoff and the vendor's Retry-After; a model cooling down is skipped while another candidate
 * remains. Resolves once a reply was written (whole, or a stream that may have ended in an error
 * event); throws the error to answer with when no attempt could give one.
 */
export async function attempt(ctx: RequestContext, env: AttemptEnv, signal: RequestSignal): Promise<void> {
  const { state } = ctx;
  const chat = state.chat!;
  const outcome = state.outcome!;
  const first = state.model ?? state.candidates[0]!;
  const chain = candidateChain(first, state.candidates, chat.maxTokens);
  outcome.attempts = [];
  const deadlineAt = ctx.startedAt + env.config.attemptsDeadlineMs;
  const inputTokens = env.counter.measure(chat, state.needs).lower;
  if (chain.length === 0) {
    const field = chat.maxTokensField ?? 'max_tokens';
    throw new GatewayError('output_too_long', `${field} is above the output limit of every candidate model.`, { param: field });
  }
  let last: GatewayError | undefined;
  for (let i = 0; i < chain.length; i++) {
    const model = chain[i]!;
    const maxTokens = chat.maxTokens ?? model.outputLimit;
    const alone = i === chain.length - 1;
    if (tooLong(model, inputTokens, maxTokens)) {
      // An explicit model (or the last candidate left) is refused without a call; a route moves on.
      last = contextError(model, inputTokens, maxTokens);
      if (alone) throw last;
      continue;
    }
    const admission = env.cooldown.admit(model.name);
    if (admission === 'skip' && !alone) continue;
    let deadlineRetries = 0;
    for (let retry = 0; retry <= env.config.retries; retry++) {
      if (signal.aborted) throw signal.reason;
      const attemptStartedAt = performance.now();
      state.model = model;
      // The request as it is when it already names its max tokens (adapters never change it).
      const request: UpstreamCall['request'] = chat.maxTokens === maxTokens ? (chat as UpstreamCall['request']) : { ...chat, maxTokens };
      // Only a stream has events to find malformed: a whole reply's call carries no callback.
      const call: UpstreamCall = { model, request, signal, onMalformed: chat.stream ? () => onMalformed(ctx, env) : undefined };
      if (model.deadlines) call.deadlines = model.deadlines;
      try {
        // Each model call through it gets its attempt record, the hold's output rules and its charge.
        const base = metered(ctx, env, env.registry.adapter(model.provider, ctx.state.principal?.workspaceId), retry > 0);
        // The tools plugin's server-side loop (kernel/contracts/tools.ts) runs inside the adapter call.
        const adapter = ctx.state.toolLoop?.wrap(base) ?? base;
        if (chat.stream) await streamReply(ctx, adapter, call, env);
        else await wholeReply(ctx, adapter, call);
        env.cooldown.succeeded(model.name);
        if (i > 0) env.stats.counts.fallbacks++;
        return;
      } catch (err) {
        if (signal.aborted || ctx.res.headersSent) {
          env.cooldown.released(model.name);
          throw signal.aborted ? signal.reason : err;
        }
        const g = toGatewayError(err);
        last = g;
        if (!isTransient(g)) {
          env.cooldown.released(model.name);
          break;
        }
        if (env.cooldown.failed(model.name)) env.stats.cooldownBegan(model.provider);
        if (isDeadline(g)) {
          // The deadline spent the client's time: the next candidate at once; the last one only
          // once more, and only if that attempt still ends within the client's budget.
          if (!alone || !retryAfterDeadline(deadlineRetries, ctx.startedAt, attemptStartedAt, performance.now(), env.config.clientBudgetMs)) break;
          deadlineRetries++;
        }
        const wait = requestedWaitMs(g);
        // A vendor asking for a longer wait than the bound: move on rather than hold the client.
        if (wait !== undefined && wait > env.config.maxRetryAfterMs) break;
        if (retry === env.config.retries || (env.cooldown.cooling(model.name) && !alone)) break;
        const delay = Math.max(backoffMs(retry + 1, env.config), wait ?? 0);
        if (performance.now() + delay >= deadlineAt) break;
        await pause(delay, signal);
        env.stats.counts.retries++;
      }
    }
    if (!last || !fallbackCodes.has(last.code)) break;
    // A route may move on after the provider's own context refusal; an explicit model has no next candidate.
  }
  throw last ?? new GatewayError('upstream_unavailable', 'No candidate model could be called.');
}

function onMalformed(ctx: RequestContext, env: AttemptEnv): void {
  const o = ctx.state.outcome!;
  o.malformedEvents = (o.malformedEvents ?? 0) + 1;
  env.stats.counts.malformedEvents++;
  // Once per request, never with the event's text.
  if (o.malformedEvents === 1) env.log.warn('upstream.malformed_event', { request_id: ctx.id, provider: ctx.state.model?.provider ?? '' });
}
