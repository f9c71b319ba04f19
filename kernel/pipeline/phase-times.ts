import { phaseNames, type PhaseName } from './phases.js';

/** Every phase's start and end, not run yet: an array of unboxed doubles, copied per request. */
const blank: number[] = phaseNames.flatMap(() => [NaN, NaN]);

/**
 * When each pipeline phase of one request started and ended (ms since the request started), kept
 * as one flat list of numbers: start and end at the phase's index (NaN for phases that did not
 * run). V8 stores it as one array of unboxed doubles, made in one copy of its full length; an
 * object per phase holding two boxed doubles cost ~70 bytes a phase, and a list grown by push
 * reallocated twice a request (issue 29's allocation budget).
 *
 * @example
 * rc.phases.record(phaseNames.indexOf('hold'), 1.25, 1.5);
 * rc.phases.forEach((phase, start, end) => console.log(phase, end - start));
 */
export class PhaseTimes {
  private readonly times = blank.slice();
  /** The index of the phase recorded last. */
  private last = -1;

  record(phase: number, start: number, end: number): void {
    this.times[2 * phase] = start;
    this.times[2 * phase + 1] = end;
    this.last = phase;
  }

  /** The end of the last phase that ran (dispatch, or the one that refused). */
  lastEnd(): number | undefined {
    return this.last === -1 ? undefined : this.times[2 * this.last + 1];
  }

  /** The phases that ran, in pipeline order (the order they run in). */
  forEach(fn: (phase: PhaseName, start: number, end: number) => void): void {
    const t = this.times;
    for (let i = 0; i < phaseNames.length; i++) if (!Number.isNaN(t[2 * i])) fn(phaseNames[i]!, t[2 * i]!, t[2 * i + 1]!);
  }
}
