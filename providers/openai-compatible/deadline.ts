import type { UpstreamCall, UpstreamTimeouts } from '../../kernel/index.js';

/** Why a call's own timer fired: a deadline before the reply started, or a silent gap in a stream. */
export type Fired = 'timeout' | 'idle';

/** The deadlines of one call in full: the provider's, overridden by the call's (the model's). */
export interface CallDeadlines {
  connectMs: number;
  firstByteMs: number;
  firstTokenMs: number;
  idleMs: number;
  totalMs: number;
}

export function callDeadlines(base: UpstreamTimeouts, call: Pick<UpstreamCall, 'deadlines'>): CallDeadlines {
  const t = { ...base, ...call.deadlines };
  return { connectMs: t.connectMs, firstByteMs: t.firstByteMs, firstTokenMs: t.firstTokenMs ?? t.firstByteMs, idleMs: t.idleMs, totalMs: t.totalMs ?? t.firstByteMs };
}

/** One timer that aborts a call: re-armed at each stage (headers, first chunk, each gap). */
export class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  fired: Fired | undefined;
  readonly signal = this.controller.signal;

  arm(ms: number, why: Fired): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = why;
      this.controller.abort(new Error(why));
    }, ms);
  }

  abort(): void {
    this.clear();
    this.controller.abort(new Error('done'));
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
