import type { UpstreamCall, UpstreamTimeouts } from '../../kernel/index.js';

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

/** A whole reply's deadline, `callDeadlines(…).totalMs`, without the object when the model sets no deadlines (every whole reply). */
export function wholeReplyMs(base: UpstreamTimeouts, call: Pick<UpstreamCall, 'deadlines'>): number {
  return call.deadlines === undefined ? (base.totalMs ?? base.firstByteMs) : callDeadlines(base, call).totalMs;
}

/** One timer that aborts a call, re-armed at each stage: the kernel's, shared with the native adapters. */
export { CallDeadline as Deadline } from '../../kernel/index.js';
