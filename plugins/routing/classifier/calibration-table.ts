/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 3.21, relative: 0.578, nearest: -0.18, nearestRelative: 4.123, lexical: 7.862, lexicalRelative: 8.037, none: 1.877 };
export const RECOMMENDED_THRESHOLD = 0.45;
