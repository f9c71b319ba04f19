import { Type, type Static } from '../../kernel/index.js';

/**
 * The routing plugin's config section (documented in README.md). Thresholds and the minimum length
 * are defaults that a route may override with its own `confidence_threshold`, `margin`, `min_chars`.
 */
export const RoutingConfigSchema = Type.Object({
  /** A route claims a prompt only when its confidence is at least this (0–1). */
  confidenceThreshold: Type.Number({ minimum: 0, maximum: 1, default: 0.5 }),
  /** ...and at least this far ahead of the second route (0 turns `ambiguous` off). */
  margin: Type.Number({ minimum: 0, maximum: 1, default: 0.05 }),
  /** Latest user messages shorter than this (characters, trimmed) go to the default (`too_short`). */
  minChars: Type.Integer({ minimum: 0, default: 12 }),
  /** Off: the classifier is never loaded; `auto` falls to the default with `classifier_unavailable`. */
  classifier: Type.Object({ enabled: Type.Boolean({ default: true }) }, { default: {} }),
  /** Safety-net reload of the routes snapshot (change messages make it immediate). */
  snapshotReloadMs: Type.Integer({ minimum: 100, default: 30_000 }),
});

export type RoutingConfig = Static<typeof RoutingConfigSchema>;
