/**
 * The labelled routing set: routes as an operator would write them (routes.json) and prompts
 * labelled with the route they belong to, or `none` (prompts.tsv). Within each (label, language)
 * group the prompts alternate between the tuning half and the held-out half, in file order, so
 * the split is fixed and anyone can see which prompts are held out.
 */
import { readFileSync } from 'node:fs';
import type { RouteText } from '../../plugins/routing/classifier/index.js';

export const NONE = 'none';

export interface LabelledPrompt {
  text: string;
  label: string;
  lang: string;
  split: 'tune' | 'holdout';
}

/** The source folder (the data files are not compiled into dist/). */
const folder = new URL('../../../bench/routing/', import.meta.url);

export function loadRoutes(): RouteText[] {
  const routes = JSON.parse(readFileSync(new URL('routes.json', folder), 'utf8')) as Omit<RouteText, 'version'>[];
  return routes.map((r) => ({ ...r, version: '1' }));
}

export function loadPrompts(routes: RouteText[]): LabelledPrompt[] {
  const known = new Set([...routes.map((r) => r.name), NONE]);
  const seen = new Map<string, number>();
  const lines = readFileSync(new URL('prompts.tsv', folder), 'utf8').split('\n');
  return lines.flatMap((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return [];
    const [label, lang, text] = line.split('\t');
    if (!label || !lang || !text || !known.has(label)) throw new Error(`prompts.tsv line ${i + 1}: expected "label<TAB>lang<TAB>text" with a known label`);
    const group = `${label}/${lang}`;
    const n = seen.get(group) ?? 0;
    seen.set(group, n + 1);
    return [{ label, lang, text: text.replace(/\\n/g, '\n'), split: n % 2 === 0 ? 'tune' : 'holdout' }];
  });
}
