/**
 * Scores a prompt against routes: the sentence encoder's similarity to each route (half its
 * centroid, half its nearest text) blended with a lexical TF-IDF score, then calibrated.
 * Runs inside the worker thread.
 */
import type { RouteText } from './contract.js';
import { dot, normalise, type SentenceEncoder, DIMENSIONS } from './encoder.js';
import { LexicalIndex } from './lexical.js';
import { Lru } from './lru.js';
import { calibrate, roundConfidence } from './calibration.js';
import { CALIBRATION } from './calibration-table.js';

/** The blend, chosen on the tuning half of bench/routing/ (see the classifier README). */
export const WEIGHTS: ScoreWeights = { centroid: 0.35, nearest: 0.35, lexical: 0.3 };

export interface ScoreWeights {
  centroid: number;
  nearest: number;
  lexical: number;
}

export interface RawScore {
  route: string;
  confidence: number;
  raw: number;
}

interface EmbeddedRoute {
  centroid: Float32Array;
  texts: Float32Array[];
}

/** A route's texts as the encoder sees them: the description, its phrases when it has several, and each example. */
export function routeTexts(route: RouteText): string[] {
  const phrases = route.description.split(/[.;:!?]\s+|,\s+(?:or|and)\s+|\n+/u).map((p) => p.trim()).filter((p) => p.length > 2);
  const texts = [route.description, ...(phrases.length > 1 ? phrases : []), ...route.examples];
  return texts.map((t) => t.trim()).filter((t) => t.length > 0);
}

export function routesKey(routes: RouteText[]): string {
  return routes.map((r) => `${r.name}@${r.version}`).join('\n');
}

export class RouteScorer {
  private readonly embeddedRoutes = new Lru<string, EmbeddedRoute>(512);
  private readonly lexical = new Lru<string, LexicalIndex>(16);
  readonly prompts: Lru<string, Float32Array>;
  /** Prompts the encoder actually ran on (cache misses). */
  encoded = 0;

  constructor(
    private readonly encoder: SentenceEncoder,
    promptCacheSize: number,
    private readonly weights: ScoreWeights = WEIGHTS,
    private readonly calibration: ReadonlyArray<readonly [number, number]> = CALIBRATION,
  ) {
    this.prompts = new Lru(promptCacheSize);
  }

  async score(text: string, routes: RouteText[]): Promise<RawScore[]> {
    if (routes.length === 0) return [];
    const [prompt, embedded] = await Promise.all([this.embedPrompt(text), this.embedRoutes(routes)]);
    const lexical = this.lexicalIndex(routes).score(text);
    const scores = routes.map((route, i) => {
      const { centroid, texts } = embedded[i]!;
      let nearest = -1;
      for (const t of texts) nearest = Math.max(nearest, dot(prompt, t));
      const { weights } = this;
      const raw = weights.centroid * dot(prompt, centroid) + weights.nearest * nearest + weights.lexical * lexical[i]!;
      return { route: route.name, raw, confidence: roundConfidence(calibrate(raw, this.calibration)) };
    });
    return scores.sort((a, b) => b.raw - a.raw || (a.route < b.route ? -1 : 1));
  }

  private async embedPrompt(text: string): Promise<Float32Array> {
    const cached = this.prompts.get(text);
    if (cached) return cached;
    const [vector] = await this.encoder.embed([text]);
    this.encoded++;
    this.prompts.set(text, vector!);
    return vector!;
  }

  private async embedRoutes(routes: RouteText[]): Promise<EmbeddedRoute[]> {
    const missing = routes.filter((r) => !this.embeddedRoutes.get(`${r.name}@${r.version}`));
    if (missing.length > 0) {
      const texts = missing.map(routeTexts);
      const vectors = await this.encoder.embed(texts.flat());
      let at = 0;
      missing.forEach((route, i) => {
        const own = vectors.slice(at, (at += texts[i]!.length));
        const sum = new Float32Array(DIMENSIONS);
        for (const v of own) for (let d = 0; d < DIMENSIONS; d++) sum[d] = sum[d]! + v[d]!;
        this.embeddedRoutes.set(`${route.name}@${route.version}`, { centroid: normalise(sum), texts: own });
      });
    }
    return routes.map((r) => this.embeddedRoutes.get(`${r.name}@${r.version}`)!);
  }

  private lexicalIndex(routes: RouteText[]): LexicalIndex {
    const key = routesKey(routes);
    let index = this.lexical.get(key);
    if (!index) {
      index = new LexicalIndex(routes.map(routeTexts));
      this.lexical.set(key, index);
    }
    return index;
  }
}
