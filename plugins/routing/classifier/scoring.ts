/**
 * Scores a prompt against routes: each route's texts (description, its phrases, examples) are
 * embedded once per route version; a prompt is compared with each route's centroid and nearest
 * text, and lexically (TF-IDF over the route set), and the three similarities become calibrated
 * probabilities (calibration.ts). Nothing here depends on which encoder made the vectors.
 * Memory is bounded: route vectors and lexical indexes live in small LRUs keyed by route
 * version, and nothing is kept per prompt.
 */
import type { RouteText } from './contract.js';
import { probabilities, roundConfidence, type Components, type LogitModel } from './calibration.js';
import { MODEL } from './calibration-table.js';
import { featureCounts, MAX_CLASSIFIED_CHARS } from './features.js';
import { LexicalIndex } from './lexical.js';
import { Lru } from './lru.js';
import { signalHints } from './signals.js';

export interface RouteDetail extends Components {
  route: string;
  confidence: number;
}

/** A prompt's scores: routes best first with their similarities, and the probability that no route fits. */
export interface Scored {
  scores: RouteDetail[];
  none: number;
}

/** The text an encoder reads for a prompt or route text: its capped prefix plus the hints of its language-neutral signals. */
export function classifiedText(text: string): string {
  const head = text.slice(0, MAX_CLASSIFIED_CHARS);
  return head + signalHints(head);
}

/** The prompt's features for the lexical score (the capped prefix; hints included, so signals count lexically too). */
export const promptFeatures = (classified: string): Map<string, number> => featureCounts(classified);

/** A route's texts: the description, its phrases when it has several, and each example. */
export function routeTexts(route: RouteText): string[] {
  const phrases = route.description.split(/[.;:!?]\s+|,\s+(?:or|and)\s+|\n+/u).map((p) => p.trim()).filter((p) => p.length > 2);
  const texts = [route.description, ...(phrases.length > 1 ? phrases : []), ...route.examples];
  return texts.map((t) => t.trim()).filter((t) => t.length > 0);
}

export function routesKey(routes: RouteText[]): string {
  return routes.map((r) => `${r.name}@${r.version}`).join('\n');
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function unit(v: Float32Array): Float32Array {
  const n = Math.sqrt(dot(v, v));
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return v;
}

export interface EmbeddedRoute {
  centroid: Float32Array;
  texts: Float32Array[];
}

/** A route's centroid and text vectors from its texts' vectors. */
export function embeddedRoute(vectors: Float32Array[]): EmbeddedRoute {
  const sum = new Float32Array(vectors[0]?.length ?? 0);
  for (const v of vectors) for (let d = 0; d < sum.length; d++) sum[d] = sum[d]! + v[d]!;
  return { centroid: unit(sum), texts: vectors };
}

/** The per-route caches (bounded) and the pure scoring step. */
export class RouteScorer {
  private readonly routes = new Lru<string, EmbeddedRoute>(512);
  private readonly lexical = new Lru<string, LexicalIndex>(16);

  constructor(private readonly model: LogitModel = MODEL) {}

  /** Route keys whose vectors are not cached yet (the caller embeds their texts and calls addRoute). */
  missing(routes: RouteText[]): RouteText[] {
    return routes.filter((r) => !this.routes.get(`${r.name}@${r.version}`));
  }

  addRoute(route: RouteText, vectors: Float32Array[]): void {
    this.routes.set(`${route.name}@${route.version}`, embeddedRoute(vectors));
  }

  /** Scores with the prompt's vector and its features (featureCounts of the text); every route must have been added. */
  score(counts: Map<string, number>, prompt: Float32Array, routes: RouteText[]): Scored {
    if (routes.length === 0) return { scores: [], none: 1 };
    const lexical = this.lexicalIndex(routes).score(counts);
    const components: Components[] = routes.map((route, i) => {
      const embedded = this.routes.get(`${route.name}@${route.version}`);
      if (!embedded) throw new Error(`route ${route.name} was not embedded`);
      let nearest = -1;
      for (const t of embedded.texts) nearest = Math.max(nearest, dot(prompt, t));
      return { centroid: dot(prompt, embedded.centroid), nearest, lexical: lexical[i]!.centroid, lexicalNearest: lexical[i]!.nearest };
    });
    const p = probabilities(components, this.model);
    const scores = routes.map((r, i) => ({ route: r.name, confidence: roundConfidence(p[i]!), ...round(components[i]!), raw: p[i]! }));
    scores.sort((a, b) => b.raw - a.raw || (a.route < b.route ? -1 : 1));
    return { scores: scores.map(({ raw: _raw, ...s }) => s), none: roundConfidence(p[p.length - 1]!) };
  }

  private lexicalIndex(routes: RouteText[]): LexicalIndex {
    const key = routesKey(routes);
    let index = this.lexical.get(key);
    if (!index) {
      index = new LexicalIndex(routes.map((r) => routeTexts(r).map(classifiedText)));
      this.lexical.set(key, index);
    }
    return index;
  }
}

const r4 = (x: number): number => Math.round(x * 10_000) / 10_000;
const round = (c: Components): Components => ({ centroid: r4(c.centroid), nearest: r4(c.nearest), lexical: r4(c.lexical), lexicalNearest: r4(c.lexicalNearest) });
