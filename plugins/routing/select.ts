import { GatewayError, type CatalogModel, type CatalogService, type ConversationsService, type RequestContext, type RoutingRule } from '../../kernel/index.js';
import type { Classification } from './classifier/index.js';
import type { ClassifierHost } from './classifier-host.js';
import type { RecentDecisions } from './recent.js';
import { decideAfterClassifier, decideBeforeClassifier, latestUserText, type Decision, type Thresholds } from './decide.js';
import { noSettings, type Route, type Snapshot, type WorkspaceRouting } from './snapshot.js';

export interface SelectDeps {
  catalog: CatalogService;
  snapshot: () => Snapshot;
  classifier: ClassifierHost;
  thresholds: Thresholds;
  conversations: () => ConversationsService | undefined;
  recent: RecentDecisions;
}

/** A client-chosen name as echoed in an error message: never more than 200 characters of it. */
const shown = (name: string): string => (name.length > 200 ? `${name.slice(0, 200)}…` : name);

export const enabledRoutes = (snap: Snapshot, workspaceId: string): Route[] => (snap.routes.get(workspaceId) ?? []).filter((r) => r.enabled);

/**
 * The models a chain of names can send to, in order: each must still be added, priced, and have a
 * configured provider (SPEC.md: a removed provider's models are refused). When none can, the
 * request ends here with the error of the first name (`what` says whose models they were).
 */
export function callable(catalog: CatalogService, workspaceId: string, names: string[], what: string): CatalogModel[] {
  const out: CatalogModel[] = [];
  let providerGone: string | undefined;
  for (const name of new Set(names)) {
    const m = catalog.model(name);
    if (!m || m.inputMicroUsdPerMTok === null || m.outputMicroUsdPerMTok === null) continue;
    // A built-in provider counts as configured with the workspace's own key too.
    if (!catalog.configured(m.provider, workspaceId)) {
      providerGone ??= m.provider;
      continue;
    }
    out.push(m);
  }
  if (out.length > 0) return out;
  if (providerGone) throw new GatewayError('provider_not_configured', `The provider ${providerGone} of ${what} is not configured.`, { param: 'model' });
  throw new GatewayError('model_not_found', `${what} names no model that is added and priced; an admin must give it another model.`, { param: 'model' });
}

/** The candidates a decision stands for: its route's model and fallbacks, or its single model. */
function candidatesOf(d: Decision, routes: Route[], catalog: CatalogService, workspaceId: string): CatalogModel[] | undefined {
  if (d.route) {
    const route = routes.find((r) => r.name === d.route);
    return route && callable(catalog, workspaceId, [route.model, ...route.fallbacks], `route/${route.name}`);
  }
  if (!d.model) throw new GatewayError('no_model', 'Nothing chose a model and the workspace has no default.', { param: 'model' });
  return callable(catalog, workspaceId, [d.model], `the workspace's ${d.rule === 'pinned' ? 'pinned' : 'default'} model`);
}

/** A kept decision's candidates, or undefined when its route or model is gone (then the request decides afresh). */
function keptCandidates(d: Decision, routes: Route[], catalog: CatalogService, workspaceId: string): CatalogModel[] | undefined {
  try {
    return candidatesOf(d, routes, catalog, workspaceId);
  } catch {
    return undefined;
  }
}

/** What a selection says, whichever rule made it. */
type Chosen = Pick<Decision, 'route' | 'reason' | 'confidence'> & { rule: RoutingRule };

function apply(rc: RequestContext, d: Chosen, candidates: CatalogModel[], sticky: boolean): void {
  rc.state.candidates = candidates;
  rc.state.selection = {
    rule: sticky ? 'sticky' : d.rule,
    ...(d.route ? { route: d.route } : {}),
    ...(!sticky && d.reason ? { reason: d.reason } : {}),
    ...(!sticky && d.confidence !== null ? { confidence: d.confidence } : {}),
  };
}

/** The rules of `auto` for one latest user message (shared by the select phase and the explain call). */
export async function decideAuto(text: string, settings: WorkspaceRouting, routes: Route[], thresholds: Thresholds, classify: (text: string, routes: Route[]) => Promise<Classification | null>): Promise<Decision> {
  const before = decideBeforeClassifier(text, settings, routes, thresholds);
  if (before) return before;
  return decideAfterClassifier(text, await classify(text, routes), settings, routes, thresholds);
}

/**
 * The select phase for `route/<name>` and `auto` (explicit models are chat-api's). A disabled or
 * unknown route is 404 model_not_found, as if it did not exist.
 */
export function selectRouted(rc: RequestContext, deps: SelectDeps): void | Promise<void> {
  const name = rc.state.chat!.model;
  // An explicit model (most requests) is chat-api's: no promise, so the pipeline stays synchronous.
  if (rc.state.candidates.length > 0 || (name !== 'auto' && !name.startsWith('route/'))) return;
  const workspaceId = rc.state.principal!.workspaceId;
  const snap = deps.snapshot();
  const routes = enabledRoutes(snap, workspaceId);
  if (name !== 'auto') {
    const route = routes.find((r) => `route/${r.name}` === name);
    if (!route) throw new GatewayError('model_not_found', `No model or route named ${shown(name)}.`, { param: 'model' });
    apply(rc, { rule: 'explicit', route: route.name, reason: null, confidence: null }, callable(deps.catalog, workspaceId, [route.model, ...route.fallbacks], name), false);
    return;
  }
  return selectAuto(rc, deps, workspaceId, snap, routes);
}

/** `auto`: a conversation's kept decision, or the rules and the classifier. */
async function selectAuto(rc: RequestContext, deps: SelectDeps, workspaceId: string, snap: ReturnType<SelectDeps['snapshot']>, routes: Route[]): Promise<void> {
  const settings = snap.settings.get(workspaceId) ?? noSettings;
  const conversation = rc.state.conversation;
  // A pinned model is for the whole workspace: it outranks a conversation's earlier choice.
  if (conversation?.decision && !settings.pinnedModel) {
    const kept = keptCandidates(conversation.decision, routes, deps.catalog, workspaceId);
    if (kept) return apply(rc, conversation.decision, kept, true);
    // Its route (or model) was removed or disabled since: decide afresh for this request (the kept decision stays).
  }
  const text = latestUserText(rc.state.chat!.messages);
  let classifierMs: number | undefined;
  const decision = await decideAuto(text, settings, routes, deps.thresholds, async (t, rs) => {
    const started = performance.now();
    const result = await deps.classifier.classify(t, rs, rc.id);
    // Only a real scoring is the classifier's latency (unavailable answers at once).
    if (result) classifierMs = performance.now() - started;
    return result;
  });
  // The prompt's text is kept for the routing page only where the workspace records prompts.
  deps.recent.record(workspaceId, rc.id, decision, text, rc.state.recordReply === true);
  const candidates = candidatesOf(decision, routes, deps.catalog, workspaceId)!;
  const service = deps.conversations();
  if (conversation && !conversation.decision && service && decision.rule !== 'pinned') {
    // Kept in the database, not in memory: another replica may serve the conversation's next request.
    const kept = await service.keepDecision(conversation.id, decision);
    if (kept.rule !== decision.rule || kept.route !== decision.route || kept.model !== decision.model) {
      // Another request of this conversation decided first: follow it.
      const theirs = keptCandidates(kept, routes, deps.catalog, workspaceId);
      if (theirs) {
        apply(rc, kept, theirs, true);
        if (classifierMs !== undefined) rc.state.selection!.classifierMs = classifierMs;
        return;
      }
    }
  }
  apply(rc, decision, candidates, false);
  if (classifierMs !== undefined) rc.state.selection!.classifierMs = classifierMs;
}
