import { CALIBRATION } from './calibration-table.js';

/** Maps a raw blended score through the held-out precision curve, interpolating linearly between points. */
export function calibrate(raw: number, table: ReadonlyArray<readonly [number, number]> = CALIBRATION): number {
  if (table.length === 0) return clamp(raw);
  if (raw <= table[0]![0]) return table[0]![1];
  for (let i = 1; i < table.length; i++) {
    const [x1, y1] = table[i]!;
    if (raw <= x1) {
      const [x0, y0] = table[i - 1]!;
      return x1 === x0 ? y1 : y0 + ((raw - x0) / (x1 - x0)) * (y1 - y0);
    }
  }
  return table[table.length - 1]![1];
}

function clamp(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/** Rounded so that a confidence read back from a header or a log equals the one compared with the threshold. */
export function roundConfidence(x: number): number {
  return Math.round(clamp(x) * 1000) / 1000;
}
