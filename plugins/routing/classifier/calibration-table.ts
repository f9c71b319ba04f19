/**
 * Raw blended score → calibrated confidence: isotonic regression of "the top route was right" on
 * the top raw score, over the tuning half of the labelled set in bench/routing/ (held-out prompts
 * never enter it). Written by `npm run eval:routing -- --calibrate`; do not edit by hand.
 */
export const CALIBRATION: ReadonlyArray<readonly [raw: number, confidence: number]> = [
  [0.2236, 0.0217],
  [0.3, 0.3214],
  [0.3257, 0.375],
  [0.3423, 0.6429],
  [0.3771, 0.7292],
  [0.4111, 0.9118],
  [0.4633, 0.9483],
  [0.5397, 0.9821],
];
