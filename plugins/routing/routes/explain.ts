import { Type, type AdminApi, type SnapshotSync } from '../../../kernel/index.js';
import { MAX_CLASSIFIED_CHARS, type Classification } from '../classifier/index.js';
import type { ClassifierHost } from '../classifier-host.js';
import type { Thresholds } from '../decide.js';
import type { RecentDecisions } from '../recent.js';
import { decideAuto, enabledRoutes } from '../select.js';
import { noSettings, type Snapshot } from '../snapshot.js';

export interface ExplainDeps {
  admin: AdminApi;
  sync: SnapshotSync<Snapshot>;
  classifier: ClassifierHost;
  thresholds: Thresholds;
  recent: RecentDecisions;
}

const tag = 'routing';
const access = { workspace: 'admin' as const, param: 'workspaceId' };
const nullableNumber = Type.Union([Type.Number(), Type.Null()]);

const ScoreView = Type.Object({
  route: Type.String(),
  confidence: Type.Number({ description: 'Calibrated probability that this route is right (0–1)' }),
  centroid: Type.Number({ description: "Cosine to the route's centroid" }),
  nearest: Type.Number({ description: "Cosine to the route's nearest text (description, phrase or example)" }),
  lexical: Type.Number({ description: "Lexical (TF-IDF) similarity to the route's centroid" }),
  lexical_nearest: Type.Number({ description: "Lexical similarity to the route's nearest text" }),
  threshold: Type.Number({ description: 'The confidence this route needs to claim a prompt' }),
});

const ExplainView = Type.Object({
  decision: Type.Object({
    rule: Type.String(), route: Type.Union([Type.String(), Type.Null()]), model: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]), confidence: nullableNumber,
  }),
  classifier: Type.Object({ state: Type.String(), encoder: Type.Union([Type.String(), Type.Null()]) }),
  classified_chars: Type.Integer({ description: `Characters of the prompt the classifier read (at most ${MAX_CLASSIFIED_CHARS})` }),
  none: nullableNumber,
  scores: Type.Array(ScoreView),
});

const Recent = Type.Object({
  request_id: Type.String(), at: Type.String(), rule: Type.String(), reason: Type.Union([Type.String(), Type.Null()]), confidence: nullableNumber,
  chars: Type.Integer(), text: Type.Union([Type.String(), Type.Null()]),
});

/** The explain call and the recent decisions (workspace admins): how operators see and improve their routes. */
export function explainRoutes(d: ExplainDeps): void {
  d.admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/routing/explain', tag, access, response: ExplainView,
    summary: "Given a prompt, each enabled route's score and what auto would decide (no model is called; the prompt is neither stored nor logged)",
    body: Type.Object({ prompt: Type.String({ maxLength: 100_000, description: 'The latest user message to route' }) }),
    handler: async ({ params, body }) => {
      const workspaceId = params.workspaceId!;
      const settings = d.sync.current.settings.get(workspaceId) ?? noSettings;
      const routes = enabledRoutes(d.sync.current, workspaceId);
      let scored: Classification | null = null;
      const classify = async (text: string, rs: typeof routes) => (scored = await d.classifier.classify(text, rs, 'explain'));
      const decision = await decideAuto(body.prompt, settings, routes, d.thresholds, classify);
      // Rules before the classifier (pinned, off, signal, too short) decide without it; the scores are shown all the same.
      if (!scored && routes.length > 0) await classify(body.prompt, routes);
      const result = scored as Classification | null;
      return {
        decision: { rule: decision.rule, route: decision.route, model: decision.route ? routes.find((r) => r.name === decision.route)?.model ?? null : decision.model, reason: decision.reason, confidence: decision.confidence },
        classifier: { state: d.classifier.state, encoder: d.classifier.encoder },
        classified_chars: Math.min(body.prompt.length, MAX_CLASSIFIED_CHARS),
        none: result?.none ?? null,
        scores: (result?.scores ?? []).map((s) => {
          const route = routes.find((r) => r.name === s.route)!;
          return { route: s.route, confidence: s.confidence, centroid: s.centroid, nearest: s.nearest, lexical: s.lexical, lexical_nearest: s.lexicalNearest, threshold: route.confidenceThreshold ?? d.thresholds.confidenceThreshold };
        }),
      };
    },
  });
  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/routing/recent', tag, access,
    summary: "Recent auto decisions this replica made: per route the prompts it claimed, and those that fell to the default (prompt text only where the workspace records prompts)",
    response: Type.Object({ claimed: Type.Record(Type.String(), Type.Array(Recent)), fell_to_default: Type.Array(Recent) }),
    handler: ({ params }) => d.recent.view(params.workspaceId!, (d.sync.current.routes.get(params.workspaceId!) ?? []).map((r) => r.name)),
  });
}
