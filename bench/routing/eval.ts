/**
 * `npm run eval:routing`: the routing classifier on the public development set (bench/routing/sets/).
 * Leave one route set out: for each route set, the logit model (calibration.ts) and the threshold
 * are fitted on the OTHER route sets only, then the set is scored, so every figure printed is on
 * routes the calibration never saw. Prints accuracy (lenient), wrong-route rate and default
 * precision per route set, per language, per route, the language groups of the issue, a
 * reliability table of the confidence, and decision latency.
 *   --write         fit on every set and write plugins/routing/classifier/calibration-table.ts
 *   --onnx <dir>    use an ONNX encoder folder instead of the built-in student table
 *   --teacher       use the student's teacher (USE-Lite, ~14 ms a prompt) to see what distillation loses
 *   --wrong-cost N  how much more a wrong route costs than a default answer when choosing thresholds (default 1)
 */
import { writeFileSync } from 'node:fs';
import { createClassifier, createStudentClassifier, type LocalClassifier } from '../../plugins/routing/classifier/index.js';
import type { Components } from '../../plugins/routing/classifier/calibration.js';
import { quantile } from '../stats.js';
import { teacherClassifier } from './teacher.js';
import { loadSets, NONE, type LabelledPrompt } from './dataset.js';
import { accuracy, chooseThreshold, count, decide, defaultPrecision, emptyTally, fitModel, reliability, tally, wrongRate, type Measured, type Tally } from './metrics.js';

const args = process.argv.slice(2);
const onnxDir = args.includes('--onnx') ? args[args.indexOf('--onnx') + 1] : undefined;
const sets = loadSets();
const wrongCost = args.includes('--wrong-cost') ? Number(args[args.indexOf('--wrong-cost') + 1]) : 1;

const classifier: LocalClassifier = args.includes('--teacher') ? await teacherClassifier() : onnxDir ? createClassifier({ onnxDir }) : createStudentClassifier();
await classifier.ready();
if (classifier.state !== 'ready') throw new Error(`the classifier did not load: ${classifier.failure}`);
const measured = new Map<string, Measured[]>();
for (const set of sets) {
  await classifier.classify('warm up the route vectors', set.routes);
  const rows: Measured[] = [];
  for (const prompt of set.prompts) {
    const started = performance.now();
    const { scores } = await classifier.classify(prompt.text, set.routes);
    const ms = performance.now() - started;
    const components: Components[] = set.routes.map((r) => scores.find((s) => s.route === r.name)!);
    rows.push({ prompt, routes: set.routes.map((r) => r.name), components, ms });
  }
  measured.set(set.name, rows);
}
await classifier.close();

const pct = (x: number): string => (Number.isNaN(x) ? '—' : `${(x * 100).toFixed(1)} %`);
const line = (name: string, t: Tally): string => `| ${name} | ${t.n} | ${pct(accuracy(t))} | ${pct(wrongRate(t))} | ${pct(defaultPrecision(t))} |`;
const head = (first: string): string => `| ${first} | n | accuracy | wrong route | default precision |\n|---|---:|---:|---:|---:|`;

const overall = emptyTally();
const bySet: string[] = [];
const byLanguage = new Map<string, Tally>();
const byRoute = new Map<string, Tally>();
const groups = new Map<string, Tally>([['English', emptyTally()], ['non-English, route texts in English only', emptyTally()], ['non-English, examples in its language', emptyTally()], ['non-English, other languages (set has some non-English examples)', emptyTally()]]);
const decisions: { confidence: number; right: boolean }[] = [];
const groupOf = (p: LabelledPrompt, setHasLocal: boolean): string =>
  p.lang === 'en' ? 'English' : p.localExamples ? 'non-English, examples in its language' : setHasLocal ? 'non-English, other languages (set has some non-English examples)' : 'non-English, route texts in English only';

console.log(`# Routing evaluation (${classifier.encoder} encoder): ${sets.reduce((n, s) => n + s.prompts.length, 0)} prompts in ${sets.length} route sets, leave one route set out\n`);
const fitted: string[] = [];
const sweep = new Map([0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((t) => [t, emptyTally()]));
for (const set of sets) {
  const others = sets.filter((s) => s !== set).flatMap((s) => measured.get(s.name)!);
  const model = fitModel(others);
  const threshold = chooseThreshold(others, model, wrongCost);
  for (const [t, tally] of sweep) for (const m of measured.get(set.name)!) count(tally, m.prompt, decide(m, model, t).predicted);
  fitted.push(`| ${set.name} | ${JSON.stringify(model).replace(/"/g, '')} | ${threshold} |`);
  const t = emptyTally();
  for (const m of measured.get(set.name)!) {
    const { predicted, confidence } = decide(m, model, threshold);
    count(t, m.prompt, predicted);
    count(overall, m.prompt, predicted);
    for (const [key, map] of [[m.prompt.lang, byLanguage], [`${set.name}/${m.prompt.labels.join('|')}`, byRoute]] as const) {
      if (!map.has(key)) map.set(key, emptyTally());
      count(map.get(key)!, m.prompt, predicted);
    }
    count(groups.get(groupOf(m.prompt, set.exampleLanguages.size > 0))!, m.prompt, predicted);
    if (predicted !== NONE) decisions.push({ confidence, right: m.prompt.labels.includes(predicted) });
  }
  bySet.push(line(`${set.name} (${set.routes.length} routes${set.exampleLanguages.size ? `, examples also in ${[...set.exampleLanguages].sort().join(' ')}` : ''})`, t));
}
console.log(`## Held-out route sets\n\n${head('route set')}\n${bySet.join('\n')}\n${line('**all**', overall)}`);
console.log(`\n## Language groups (held out)\n\n${head('group')}\n${[...groups].filter(([, t]) => t.n > 0).map(([g, t]) => line(g, t)).join('\n')}`);
console.log(`\n## Per language (held out)\n\n${head('language')}\n${[...byLanguage].sort((a, b) => b[1].n - a[1].n).map(([l, t]) => line(l, t)).join('\n')}`);
console.log(`\n## Per route (held out; recall is the accuracy column)\n\n${head('set/route')}\n${[...byRoute].map(([r, t]) => line(r, t)).join('\n')}`);
console.log(`\n## Confidence of the routes chosen (held out): is it a probability?\n\n| confidence | decisions | right |\n|---|---:|---:|\n${reliability(decisions).map((b) => `| ${b.band} | ${b.n} | ${b.n ? pct(b.right / b.n) : '—'} |`).join('\n')}`);
console.log(`\n## The same held-out decisions at fixed thresholds (what a route's confidence_threshold buys)\n\n${head('threshold')}\n${[...sweep].map(([t, x]) => line(String(t), x)).join('\n')}`);
console.log(`\n## Models fitted without each set\n\n| left out | logit model | threshold |\n|---|---|---:|\n${fitted.join('\n')}`);

const all = sets.flatMap((s) => measured.get(s.name)!);
const routed = all.filter((m) => !m.prompt.labels.includes(NONE));
const top1 = (rows: Measured[]): string => pct(rows.filter((m) => m.prompt.labels.includes(m.routes[m.components.reduce((b, c, i, a) => (c.centroid + c.nearest > a[b]!.centroid + a[b]!.nearest ? i : b), 0)]!)).length / rows.length);
console.log(`\nTop-1 among routes by embedding alone (centroid + nearest, no threshold), prompts that belong to a route: all ${top1(routed)}, English ${top1(routed.filter((m) => m.prompt.lang === 'en'))}, non-English ${top1(routed.filter((m) => m.prompt.lang !== 'en'))}`);
const ms = all.map((m) => m.ms);
console.log(`\nDecision latency (classify(), ${classifier.encoder} encoder, no cache, ${all.length} prompts): p50 ${quantile(ms, 0.5).toFixed(3)} ms, p99 ${quantile(ms, 0.99).toFixed(3)} ms, max ${Math.max(...ms).toFixed(3)} ms`);

if (args.includes('--write')) {
  const model = fitModel(all);
  const threshold = chooseThreshold(all, model, wrongCost);
  const t = tally(all, model, threshold);
  writeFileSync(new URL('../../../plugins/routing/classifier/calibration-table.ts', import.meta.url), `/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by \`npm run eval:routing -- --write\` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = ${JSON.stringify(model).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ').replace(/^\{/, '{ ').replace(/\}$/, ' }')};
export const RECOMMENDED_THRESHOLD = ${threshold};
`);
  console.log(`\nWrote calibration-table.ts: ${JSON.stringify(model)}, threshold ${threshold} (in-sample on all sets: ${pct(accuracy(t))} right, ${pct(wrongRate(t))} wrong route)`);
}
