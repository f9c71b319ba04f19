/**
 * The classifier's worker thread: loads the encoder once and scores prompts, so inference never
 * runs on the service's event loop. Requests are handled one at a time, in arrival order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RouteText } from './contract.js';
import { SentenceEncoder } from './encoder.js';
import { Lru } from './lru.js';
import type { FromWorker, ToWorker, WorkerOptions } from './protocol.js';
import { RouteScorer } from './scoring.js';

const port = parentPort!;
const options = workerData as WorkerOptions;
const send = (message: FromWorker): void => port.postMessage(message);
const routeSets = new Lru<string, RouteText[]>(16);

async function main(): Promise<void> {
  const started = performance.now();
  let scorer: RouteScorer;
  try {
    scorer = new RouteScorer(await SentenceEncoder.load(options.modelDir), options.promptCacheSize, options.weights, options.calibration);
    // One warm-up pass compiles the graph's kernels, so the first real prompt is not the slowest.
    await scorer.score('warm up', [{ name: 'warm-up', version: '0', description: 'warm up', examples: [] }]);
    scorer.encoded = 0;
  } catch (err) {
    send({ kind: 'failed', reason: err instanceof Error ? err.message : String(err) });
    return;
  }
  send({ kind: 'ready', loadMs: Math.round(performance.now() - started) });

  let queue = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    queue = queue.then(() => handle(scorer, message));
  });
}

async function handle(scorer: RouteScorer, message: ToWorker): Promise<void> {
  if (message.kind === 'stats') {
    send({ kind: 'stats', id: message.id, encoded: scorer.encoded, promptCacheHits: scorer.prompts.hits });
    return;
  }
  if (message.routes) routeSets.set(message.routesKey, message.routes);
  const routes = routeSets.get(message.routesKey);
  if (!routes) {
    send({ kind: 'needRoutes', id: message.id });
    return;
  }
  try {
    send({ kind: 'scores', id: message.id, scores: await scorer.score(message.text, routes) });
  } catch (err) {
    send({ kind: 'error', id: message.id, reason: err instanceof Error ? err.message : String(err) });
  }
}

void main();
