/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 3.898, relative: 0.285, nearest: -0.001, nearestRelative: 4.152, lexical: 4.064, lexicalRelative: 4.482, lexicalNearest: 3.175, lexicalNearestRelative: 4.313, none: 2.232 };
export const RECOMMENDED_THRESHOLD = 0.575;
