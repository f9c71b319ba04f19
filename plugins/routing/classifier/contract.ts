/**
 * The contract between the routing plugin (rules, thresholds, headers) and its offline classifier
 * (encoder, scoring). The routing plugin decides; the classifier only scores.
 */
import type { RouteDetail } from './scoring.js';

/** A route as the classifier sees it. `version` changes whenever its texts change, so a route's texts are embedded once per version. */
export interface RouteText {
  name: string;
  version: string;
  description: string;
  examples: string[];
}

/**
 * One route's calibrated confidence that the prompt belongs to it (0–1, a probability fitted over
 * many route sets), with the similarities it came from (for the explain call).
 */
export type RouteScore = RouteDetail;

/** Every route's score for one prompt, best first, and the probability that none fits. */
export interface Classification {
  scores: RouteScore[];
  none: number;
}

/**
 * The classifier, made by `createClassifier()` in ./index.ts.
 *
 * @example
 * const c = createClassifier({});
 * await c.ready();
 * if (c.state === 'ready') {
 *   const { scores } = await c.classify('Write a SQL query that…', routes);
 * }
 */
export interface RouteClassifier {
  readonly state: 'loading' | 'ready' | 'unavailable';
  /** Resolves once loading ended, well or not (never rejects): read `state` after it. */
  ready(): Promise<void>;
  /** Scores the prompt against the routes. Rejects when `state` is not 'ready'. The same text and routes always give the same scores. */
  classify(text: string, routes: RouteText[]): Promise<Classification>;
  close(): Promise<void>;
}
