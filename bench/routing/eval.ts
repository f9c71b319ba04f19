/**
 * `npm run eval:routing`: runs the classifier on the labelled set (bench/routing/) and prints
 * accuracy, wrong-route rate, default precision/recall, per-route recall, per-language accuracy,
 * a confusion matrix and latency, on the tuning half and on the held-out half separately.
 *   --calibrate   refit the calibration on the tuning half, write calibration-table.ts, suggest a threshold
 *   --weights c,n,l   try another blend (centroid, nearest text, lexical)
 */
import { writeFileSync } from 'node:fs';
import { createClassifier, DEFAULT_AMBIGUITY_MARGIN, DEFAULT_CONFIDENCE_THRESHOLD } from '../../plugins/routing/classifier/index.js';
import { calibrate, roundConfidence } from '../../plugins/routing/classifier/calibration.js';
import { CALIBRATION } from '../../plugins/routing/classifier/calibration-table.js';
import { WEIGHTS } from '../../plugins/routing/classifier/scoring.js';
import { loadPrompts, loadRoutes, NONE } from './dataset.js';
import { decide, fitCalibration, report, type Scored } from './metrics.js';
import { quantile } from '../stats.js';
import { printReport, printSweep } from './print.js';

const args = process.argv.slice(2);
const refit = args.includes('--calibrate');
const weightsArg = args[args.indexOf('--weights') + 1];
const weights = args.includes('--weights') && weightsArg ? (([centroid, nearest, lexical]) => ({ centroid: centroid!, nearest: nearest!, lexical: lexical! }))(weightsArg.split(',').map(Number)) : WEIGHTS;

const routes = loadRoutes();
const prompts = loadPrompts(routes);
const labels = [...routes.map((r) => r.name), NONE];

// Raw scores (empty calibration) and no caches, so every prompt is really encoded and timed.
const classifier = createClassifier({ calibration: [], weights, promptCacheSize: 0, resultCacheSize: 0 });
await classifier.ready();
if (classifier.state !== 'ready') throw new Error('the classifier did not load');
await classifier.classify('warm up the route vectors', routes);
const scored: Scored[] = [];
for (const prompt of prompts) {
  const started = performance.now();
  const { scores } = await classifier.classify(prompt.text, routes);
  scored.push({ prompt, ms: performance.now() - started, scores: scores.map((s) => ({ route: s.route, raw: s.confidence })) });
}
const { loadMs } = await classifier.stats();
await classifier.close();

const tune = scored.filter((s) => s.prompt.split === 'tune');
const holdout = scored.filter((s) => s.prompt.split === 'holdout');
let table = CALIBRATION;
let threshold = DEFAULT_CONFIDENCE_THRESHOLD;
let margin = DEFAULT_AMBIGUITY_MARGIN;
const confidences = (s: Scored): { route: string; confidence: number }[] => s.scores.map((x) => ({ route: x.route, confidence: roundConfidence(calibrate(x.raw, table)) }));
const sweep = (set: Scored[], t: number, m: number) => report(set.map((s) => ({ prompt: s.prompt, predicted: decide(confidences(s), t, m) })), labels);

if (refit) {
  table = fitCalibration(tune.map((s) => ({ raw: s.scores[0]!.raw, right: s.scores[0]!.route === s.prompt.label })));
  writeFileSync(new URL('../../../plugins/routing/classifier/calibration-table.ts', import.meta.url), calibrationSource(table));
  const rows: { t: number; m: number; accuracy: number; wrongRoute: number }[] = [];
  for (let t = 0.3; t <= 0.951; t += 0.05) for (const m of [0, 0.02, 0.05, 0.1]) rows.push({ t, m, ...sweep(tune, t, m) });
  printSweep(rows);
  // Wrong routes cost more than a default answer (a wrong model for the task), so they count twice.
  const best = rows.reduce((a, b) => (b.accuracy - b.wrongRoute > a.accuracy - a.wrongRoute ? b : a));
  threshold = Math.round(best.t * 100) / 100;
  margin = best.m;
  console.log(`\nWrote calibration-table.ts (${table.length} points). Suggested defaults from the tuning half: threshold ${threshold}, margin ${margin}.`);
}

const top1 = (set: Scored[]): number => set.filter((s) => s.prompt.label !== NONE && s.scores[0]!.route === s.prompt.label).length / set.filter((s) => s.prompt.label !== NONE).length;
console.log(`\nRouting classifier evaluation: ${prompts.length} prompts (${tune.length} tuning, ${holdout.length} held out), ${routes.length} routes + none`);
console.log(`weights centroid ${weights.centroid} / nearest ${weights.nearest} / lexical ${weights.lexical}; threshold ${threshold}, margin ${margin}; model load ${loadMs} ms`);
printReport('TUNING half (weights, calibration and thresholds were chosen on it)', sweep(tune, threshold, margin), labels, top1(tune));
printReport('HELD-OUT half (never used for tuning)', sweep(holdout, threshold, margin), labels, top1(holdout));
const ms = scored.map((s) => s.ms);
console.log(`\nLatency per prompt (classify() round trip from the main thread, encoder in the worker, no cache): p50 ${quantile(ms, 0.5).toFixed(2)} ms, p99 ${quantile(ms, 0.99).toFixed(2)} ms, max ${Math.max(...ms).toFixed(2)} ms`);

function calibrationSource(points: ReadonlyArray<readonly [number, number]>): string {
  return `/**
 * Raw blended score → calibrated confidence: isotonic regression of "the top route was right" on
 * the top raw score, over the tuning half of the labelled set in bench/routing/ (held-out prompts
 * never enter it). Written by \`npm run eval:routing -- --calibrate\`; do not edit by hand.
 */
export const CALIBRATION: ReadonlyArray<readonly [raw: number, confidence: number]> = [
${points.map(([r, c]) => `  [${r}, ${c}],`).join('\n')}
];
`;
}
