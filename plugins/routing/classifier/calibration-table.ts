/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 6.22, relative: 1.761, nearest: 2.988, nearestRelative: 0.887, lexical: 3.44, lexicalRelative: 3.664, lexicalNearest: 3.306, lexicalNearestRelative: 4.008, none: 3.798 };
export const RECOMMENDED_THRESHOLD = 0.5;
