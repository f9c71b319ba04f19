/** Text tables for the evaluation harness. */
import type { Report } from './metrics.js';

const pct = (x: number): string => (Number.isNaN(x) ? '   —  ' : `${(x * 100).toFixed(1).padStart(5)}%`);

export function printReport(title: string, r: Report, labels: string[], top1: number): void {
  console.log(`\n== ${title}: ${r.n} prompts`);
  console.log(`accuracy ${pct(r.accuracy)}   wrong route ${pct(r.wrongRoute)}   default precision ${pct(r.defaultPrecision)} recall ${pct(r.defaultRecall)}   top-1 among routes (no threshold) ${pct(top1)}`);
  console.log(`recall per label: ${labels.map((l) => `${l} ${pct(r.recall.get(l)!).trim()}`).join(', ')}`);
  console.log(`accuracy per language: ${[...r.byLanguage].map(([l, v]) => `${l} ${pct(v.accuracy).trim()} (n=${v.n})`).join(', ')}`);
  const width = Math.max(...labels.map((l) => l.length)) + 2;
  console.log(`confusion (rows: label, columns: decision)\n${''.padEnd(width)}${labels.map((l) => l.slice(0, 6).padStart(7)).join('')}`);
  for (const l of labels) console.log(`${l.padEnd(width)}${labels.map((p) => String(r.confusion.get(l)!.get(p)).padStart(7)).join('')}`);
}

export function printSweep(rows: { t: number; m: number; accuracy: number; wrongRoute: number }[]): void {
  console.log('Threshold sweep on the tuning half (threshold, margin: accuracy / wrong route)');
  for (const r of rows) console.log(`  ${r.t.toFixed(2)}, ${r.m.toFixed(2)}: ${pct(r.accuracy)} / ${pct(r.wrongRoute)}`);
}
