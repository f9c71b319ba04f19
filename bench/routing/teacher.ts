/**
 * The evaluation's `--teacher` encoder: Universal Sentence Encoder Lite (the student table's
 * teacher) on this thread, through the same scoring, to show how much the distillation loses.
 */
import type { LocalClassifier } from '../../plugins/routing/classifier/index.js';
import { defaultModelDir, SentenceEncoder } from './use-lite.js';
import { classifiedText, promptFeatures, RouteScorer, routeTexts } from '../../plugins/routing/classifier/scoring.js';

export async function teacherClassifier(): Promise<LocalClassifier> {
  const encoder = await SentenceEncoder.load(defaultModelDir());
  const scorer = new RouteScorer();
  return {
    encoder: 'use-lite',
    state: 'ready',
    ready: async () => {},
    async classify(text, routes) {
      for (const route of scorer.missing(routes)) scorer.addRoute(route, await encoder.embed(routeTexts(route).map(classifiedText)));
      const [prompt] = await encoder.embed([classifiedText(text)]);
      return scorer.score(promptFeatures(classifiedText(text)), prompt!, routes);
    },
    close: async () => {},
  };
}
