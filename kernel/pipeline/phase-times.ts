import { phaseNames, type PhaseName } from './phases.js';

/**
 * When each pipeline phase of one request started and ended (ms since the request started), kept
 * as one flat list of numbers: phase index, start, end for each phase that ran. V8 stores it as
 * one array of unboxed doubles; an object per phase holding two boxed doubles cost ~70 bytes a
 * phase, some ten phases a request (issue 29's allocation budget).
 *
 * @example
 * rc.phases.record(phaseNames.indexOf('hold'), 1.25, 1.5);
 * rc.phases.forEach((phase, start, end) => console.log(phase, end - start));
 */
export class PhaseTimes {
  private readonly times: number[] = [];

  record(phase: number, start: number, end: number): void {
    this.times.push(phase, start, end);
  }

  /** The end of the last phase that ran (dispatch, or the one that refused). */
  lastEnd(): number | undefined {
    const n = this.times.length;
    return n > 0 ? this.times[n - 1] : undefined;
  }

  forEach(fn: (phase: PhaseName, start: number, end: number) => void): void {
    const t = this.times;
    for (let i = 0; i < t.length; i += 3) fn(phaseNames[t[i]!]!, t[i + 1]!, t[i + 2]!);
  }
}
