import { Type, type Static } from '../../kernel/index.js';
import { DEFAULT_AMBIGUITY_MARGIN, DEFAULT_CONFIDENCE_THRESHOLD, DEFAULT_MIN_MESSAGE_CHARS } from './classifier/index.js';

/**
 * The routing plugin's config section (documented in README.md). Thresholds and the minimum length
 * are defaults that a route may override with its own `confidence_threshold`, `margin`, `min_chars`;
 * their defaults are the classifier's recommendations (chosen on its held-out evaluation set).
 */
export const RoutingConfigSchema = Type.Object({
  /** A route claims a prompt only when its confidence is at least this (0–1). */
  confidenceThreshold: Type.Number({ minimum: 0, maximum: 1, default: DEFAULT_CONFIDENCE_THRESHOLD }),
  /** ...and at least this far ahead of the second route (0 turns `ambiguous` off). */
  margin: Type.Number({ minimum: 0, maximum: 1, default: DEFAULT_AMBIGUITY_MARGIN }),
  /** Latest user messages shorter than this (characters, trimmed) go to the default (`too_short`). */
  minChars: Type.Integer({ minimum: 0, default: DEFAULT_MIN_MESSAGE_CHARS }),
  /** Off: the classifier is never loaded; `auto` falls to the default with `classifier_unavailable`. */
  classifier: Type.Object(
    {
      enabled: Type.Boolean({ default: true }),
      /** A local folder with an ONNX sentence encoder (model.onnx) and its tokenizer (tokenizer.json), run in a worker; default: the built-in student table. */
      onnxDir: Type.Optional(Type.String({ minLength: 1 })),
    },
    { default: {} },
  ),
  /** Safety-net reload of the routes snapshot (change messages make it immediate). */
  snapshotReloadMs: Type.Integer({ minimum: 100, default: 30_000 }),
});

export type RoutingConfig = Static<typeof RoutingConfigSchema>;
