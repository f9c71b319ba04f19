/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 4.516, relative: 0.569, nearest: 1.312, nearestRelative: 2.429, lexical: 3.649, lexicalRelative: 4.051, lexicalNearest: 3.038, lexicalNearestRelative: 4.134, none: 2.592 };
export const RECOMMENDED_THRESHOLD = 0.5;
