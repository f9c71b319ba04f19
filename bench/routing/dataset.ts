/**
 * The public development set for routing: several route sets written as operators write them,
 * each a folder under bench/routing/sets/ with routes.json ({ about, routes: [{ name,
 * description, examples }] }) and prompts.tsv (label TAB language TAB text; the label is a route
 * name, several joined by "|" when more than one route is a right answer (lenient accuracy), or
 * `none` for prompts no route should claim). The prompts were written for this set by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { RouteText } from '../../plugins/routing/classifier/index.js';

export const NONE = 'none';

export interface LabelledPrompt {
  set: string;
  text: string;
  /** The right answers: route names, or [NONE]. */
  labels: string[];
  lang: string;
  /** Whether some route of the set has an example in the prompt's language (other than English). */
  localExamples: boolean;
}

export interface RouteSet {
  name: string;
  about: string;
  routes: RouteText[];
  prompts: LabelledPrompt[];
  /** Languages other than English that some route's examples are written in. */
  exampleLanguages: Set<string>;
}

/** The source folder (the data files are not compiled into dist/). */
const folder = new URL('../../../bench/routing/sets/', import.meta.url);

/** A rough language guess for route examples (only to know which languages a set's examples cover). */
function guessLanguage(text: string): string {
  if (/[\u3040-\u30ff]/u.test(text)) return 'ja';
  if (/\p{Script=Han}/u.test(text)) return 'zh';
  if (/\p{Script=Hangul}/u.test(text)) return 'ko';
  if (/\p{Script=Cyrillic}/u.test(text)) return 'ru';
  // English wording that quotes another language ("What does 'je ne sais quoi' mean?") is still English.
  if ((text.match(/\b(?:the|what|does|how|my|is|this|to|for|of|and|you|with|can|do)\b/giu) ?? []).length >= 2) return 'en';
  if (/[¿¡ñ]|\b(?:el|los|las|una|para|cuánto|qué|puedo|mi)\b/iu.test(text)) return 'es';
  if (/[äöüß]|\b(?:ich|ist|der|die|das|und|bitte|nicht|wie)\b/iu.test(text)) return 'de';
  if (/[àâçèêëîïôûœ]|\b(?:je|le|la|les|des|est|une|pour|vous)\b/iu.test(text)) return 'fr';
  return 'en';
}

export function loadSet(name: string): RouteSet {
  const dir = new URL(`${name}/`, folder);
  const { about, routes } = JSON.parse(readFileSync(new URL('routes.json', dir), 'utf8')) as { about: string; routes: Omit<RouteText, 'version'>[] };
  const known = new Set([...routes.map((r) => r.name), NONE]);
  const exampleLanguages = new Set(routes.flatMap((r) => r.examples.map(guessLanguage)).filter((l) => l !== 'en'));
  const prompts = readFileSync(new URL('prompts.tsv', dir), 'utf8').split('\n').flatMap((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return [];
    const [label, lang, text] = line.split('\t');
    const labels = (label ?? '').split('|');
    if (!lang || !text || !labels.every((l) => known.has(l))) throw new Error(`sets/${name}/prompts.tsv line ${i + 1}: expected "label<TAB>lang<TAB>text" with known labels`);
    return [{ set: name, labels, lang, text: text.replace(/\\n/g, '\n'), localExamples: lang !== 'en' && exampleLanguages.has(lang) }];
  });
  return { name, about, routes: routes.map((r) => ({ ...r, version: '1' })), prompts, exampleLanguages };
}

export function loadSets(): RouteSet[] {
  return readdirSync(folder, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort().map(loadSet);
}
