/**
 * Raw blended score → calibrated confidence: the precision the classifier reached on the tuning
 * half of the labelled set (bench/routing/) among prompts whose top score was at least that raw
 * score, made non-decreasing. Written by `npm run eval:routing -- --calibrate`; do not edit by hand.
 */
export const CALIBRATION: ReadonlyArray<readonly [raw: number, confidence: number]> = [
  [0, 0],
  [1, 1],
];
