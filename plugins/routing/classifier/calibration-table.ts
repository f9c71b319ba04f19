/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 3.807, relative: 0.542, nearest: 1.113, nearestRelative: 2.946, lexical: 4.011, lexicalRelative: 4.529, lexicalNearest: 3.328, lexicalNearestRelative: 4.466, none: 2.621 };
export const RECOMMENDED_THRESHOLD = 0.55;
