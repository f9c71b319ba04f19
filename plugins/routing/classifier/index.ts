/**
 * The offline route classifier. Built in: the distilled student table (student.ts), on the
 * calling thread, a fraction of a millisecond per decision, no download. Pluggable: an ONNX
 * sentence encoder from a local folder, run in a worker thread (onnx/). Both feed the same
 * scoring and calibration (scoring.ts, calibration.ts). See ./contract.ts and ./README.md.
 */
import type { Classification, RouteClassifier, RouteText } from './contract.js';
import { RECOMMENDED_THRESHOLD } from './calibration-table.js';
import type { LogitModel } from './calibration.js';
import { classifiedText, promptFeatures, RouteScorer, routeTexts } from './scoring.js';
import { StudentEncoder } from './student.js';
import { createOnnxClassifier } from './onnx/client.js';

export type { Classification, RouteClassifier, RouteScore, RouteText } from './contract.js';
export { MAX_CLASSIFIED_CHARS } from './features.js';

/** Recommended `auto` threshold on the calibrated confidence, chosen over the evaluation's route sets. */
export const DEFAULT_CONFIDENCE_THRESHOLD = RECOMMENDED_THRESHOLD;
/** Recommended margin: 0, since two close routes already share the probability (calibration.ts). */
export const DEFAULT_AMBIGUITY_MARGIN = 0;
/** Recommended minimum latest-user-message length in characters (trimmed) below which `auto` does not classify (`too_short`). */
export const DEFAULT_MIN_MESSAGE_CHARS = 8;

export interface ClassifierOptions {
  /** A folder holding an ONNX sentence encoder (model.onnx) and its tokenizer (tokenizer.json); default: the built-in student table. */
  onnxDir?: string;
  /** Logit model override (the evaluation harness fits its own). */
  model?: LogitModel;
}

/** The classifier plus what tests and the benchmark read. */
export interface LocalClassifier extends RouteClassifier {
  /** 'student' (built in) or 'onnx'; the evaluation's teacher says 'use-lite'. */
  readonly encoder: string;
  /** Errors that made it unavailable, for the log. */
  readonly failure?: string;
}

export function createClassifier(options: ClassifierOptions = {}): LocalClassifier {
  if (options.onnxDir) return createOnnxClassifier(options.onnxDir, options.model);
  return createStudentClassifier(options.model);
}

/** The built-in classifier: loads the table (a few MB) and scores on the calling thread. */
export function createStudentClassifier(model?: LogitModel): LocalClassifier & { classifySync(text: string, routes: RouteText[]): Classification } {
  let state: RouteClassifier['state'] = 'loading';
  let failure: string | undefined;
  let encoder: StudentEncoder | undefined;
  const scorer = new RouteScorer(model);
  const loaded = new Promise<void>((resolve) => {
    setImmediate(() => {
      try {
        encoder = StudentEncoder.load();
        state = 'ready';
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
        state = 'unavailable';
      }
      resolve();
    });
  });
  const classifySync = (text: string, routes: RouteText[]): Classification => {
    if (state !== 'ready' || !encoder) throw new Error(`route classifier ${state}`);
    for (const route of scorer.missing(routes)) scorer.addRoute(route, routeTexts(route).map((t) => encoder!.embed(classifiedText(t))));
    // One pass over the prompt: its features feed both the encoder and the lexical score.
    const counts = promptFeatures(classifiedText(text));
    return scorer.score(counts, encoder.embedCounts(counts), routes);
  };
  return {
    encoder: 'student',
    get state() {
      return state;
    },
    get failure() {
      return failure;
    },
    ready: () => loaded,
    classify: async (text, routes) => classifySync(text, routes),
    classifySync,
    async close() {
      state = 'unavailable';
      failure ??= 'closed';
    },
  };
}
