/**
 * The fitted logit model and the recommended threshold (calibration.ts says what they mean).
 * Written by `npm run eval:routing -- --write` from every route set in bench/routing/sets/;
 * do not edit by hand. The evaluation's figures are leave-one-route-set-out.
 */
import type { LogitModel } from './calibration.js';

export const MODEL: LogitModel = { centroid: 5.744, relative: 1.116, nearest: 2.877, nearestRelative: 0.922, lexical: 3.803, lexicalRelative: 3.866, lexicalNearest: 3.771, lexicalNearestRelative: 4.254, none: 3.835 };
export const RECOMMENDED_THRESHOLD = 0.5;
