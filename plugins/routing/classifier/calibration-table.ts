/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 3.875, relative: 0.287, nearest: -0.007, nearestRelative: 4.159, lexical: 4.013, lexicalRelative: 4.348, lexicalNearest: 3.265, lexicalNearestRelative: 4.324, none: 2.217 };
export const RECOMMENDED_THRESHOLD = 0.575;
