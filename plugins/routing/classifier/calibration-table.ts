/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 5.121, relative: 0.44, nearest: 2.384, nearestRelative: 1.246, lexical: 3.606, lexicalRelative: 3.909, lexicalNearest: 3.153, lexicalNearestRelative: 4.024, none: 2.987 };
export const RECOMMENDED_THRESHOLD = 0.525;
