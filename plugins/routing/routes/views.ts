import { Type, type CatalogService } from '../../../kernel/index.js';
import type { Route, WorkspaceRouting } from '../snapshot.js';

const threshold = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description });
const ModelName = Type.String({ minLength: 3, maxLength: 300 });

/** The fields an admin writes on a route (all but name optional on PATCH). */
export const RouteFields = {
  model: ModelName,
  fallbacks: Type.Array(ModelName, { maxItems: 10, description: 'Tried in order after the model (capability rule, provider gone, failure before the first chunk)' }),
  description: Type.String({ maxLength: 2000, description: 'What the route is for, as one would tell a colleague; read by the classifier' }),
  examples: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 50, description: 'Example phrasings of requests the route should take; read by the classifier' }),
  enabled: Type.Boolean({ description: 'Only enabled routes are listed by GET /v1/models and considered by auto' }),
  confidence_threshold: threshold("This route's own confidence threshold (null: the configured default)"),
  margin: threshold("This route's own margin over the second route (null: the configured default)"),
  min_chars: Type.Union([Type.Integer({ minimum: 0, maximum: 10_000 }), Type.Null()], { description: 'Shortest latest user message this route may claim (null: the configured default)' }),
};

export const RouteName = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Lowercase letters, numbers, dashes and underscores; addressed as route/<name>' });

export const RouteView = Type.Object({
  name: Type.String(),
  ...RouteFields,
  needs_model: Type.Boolean({ description: 'True when a model it names was removed (or lost its price): give it another model' }),
  missing_models: Type.Array(Type.String(), { description: 'The models it names that are no longer added and priced' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const SettingsView = Type.Object({
  default_model: Type.Union([Type.String(), Type.Null()], { description: 'Where auto sends what no route claims' }),
  pinned_model: Type.Union([Type.String(), Type.Null()], { description: 'When set, auto sends every request here (rule pinned)' }),
  routing_enabled: Type.Boolean({ description: 'Off: auto goes to the default model (reason routing_off)' }),
  code_route: Type.Union([Type.String(), Type.Null()], { description: 'The route a fenced code block goes to (rule signal)' }),
  needs_model: Type.Boolean({ description: 'True when the default or pinned model was removed' }),
  missing_models: Type.Array(Type.String()),
});

/** Names that are no longer an added model with both prices. */
export function missing(catalog: CatalogService, names: Array<string | null>): string[] {
  return [...new Set(names.filter((n): n is string => n !== null))].filter((n) => {
    const m = catalog.model(n);
    return !m || m.inputMicroUsdPerMTok === null || m.outputMicroUsdPerMTok === null;
  });
}

export function routeView(r: Route, catalog: CatalogService) {
  const gone = missing(catalog, [r.model, ...r.fallbacks]);
  return {
    name: r.name, model: r.model, fallbacks: r.fallbacks, description: r.description, examples: r.examples, enabled: r.enabled,
    confidence_threshold: r.confidenceThreshold, margin: r.margin, min_chars: r.minChars,
    needs_model: gone.length > 0, missing_models: gone, created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
}

export function settingsView(s: WorkspaceRouting, catalog: CatalogService) {
  const gone = missing(catalog, [s.defaultModel, s.pinnedModel]);
  return { default_model: s.defaultModel, pinned_model: s.pinnedModel, routing_enabled: s.routingEnabled, code_route: s.codeRoute, needs_model: gone.length > 0, missing_models: gone };
}
