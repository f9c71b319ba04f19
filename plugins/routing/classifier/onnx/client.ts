/**
 * The classifier over an operator's ONNX encoder: the encoder runs in a worker thread (worker.ts);
 * scoring, calibration and the decision rules are the built-in ones (scoring.ts) on this thread.
 */
import { Worker } from 'node:worker_threads';
import type { LogitModel } from '../calibration.js';
import type { Classification, RouteClassifier, RouteText } from '../contract.js';
import type { LocalClassifier } from '../index.js';
import { classifiedText, promptFeatures, RouteScorer, routeTexts } from '../scoring.js';
import type { FromWorker, ToWorker } from './protocol.js';

export function createOnnxClassifier(dir: string, model?: LogitModel): LocalClassifier {
  const scorer = new RouteScorer(model);
  const pending = new Map<number, { resolve(v: Float32Array[]): void; reject(e: Error): void }>();
  let state: RouteClassifier['state'] = 'loading';
  let failure: string | undefined;
  let nextId = 1;
  let settleReady!: () => void;
  const readyPromise = new Promise<void>((resolve) => (settleReady = resolve));
  const fail = (reason: string): void => {
    if (state === 'unavailable') return;
    state = 'unavailable';
    failure ??= reason;
    for (const p of pending.values()) p.reject(new Error('route classifier unavailable'));
    pending.clear();
    settleReady();
  };

  // Bounded heap: the worker holds the session and one request's tensors at a time.
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: { dir }, resourceLimits: { maxOldGenerationSizeMb: 128 } });
  worker.unref();
  worker.on('message', (m: FromWorker) => {
    if (m.kind === 'ready') {
      state = 'ready';
      settleReady();
    } else if (m.kind === 'failed') fail(m.reason);
    else {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.kind === 'vectors') p?.resolve(m.vectors);
      else p?.reject(new Error(`route classifier failed: ${m.reason}`));
    }
  });
  worker.on('error', (err) => fail(err.message));
  worker.on('exit', () => fail('worker exited'));

  const embed = (texts: string[]): Promise<Float32Array[]> =>
    new Promise((resolve, reject) => {
      if (state !== 'ready') return reject(new Error(`route classifier ${state}`));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ kind: 'embed', id, texts } satisfies ToWorker);
    });

  return {
    encoder: 'onnx',
    get state() {
      return state;
    },
    get failure() {
      return failure;
    },
    ready: () => readyPromise,
    async classify(text: string, routes: RouteText[]): Promise<Classification> {
      if (state !== 'ready') throw new Error(`route classifier ${state}`);
      for (const route of scorer.missing(routes)) scorer.addRoute(route, await embed(routeTexts(route).map(classifiedText)));
      const [prompt] = await embed([classifiedText(text)]);
      return scorer.score(promptFeatures(classifiedText(text)), prompt!, routes);
    },
    async close() {
      fail('closed');
      await worker.terminate();
    },
  };
}
