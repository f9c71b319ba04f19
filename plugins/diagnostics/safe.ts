/** Parts that fail say why with a code only: error messages can carry hosts, users or paths. */
export function reason(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  if (typeof e?.code === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(e.code)) return e.code;
  if (e?.name === 'TimeoutError') return 'timeout';
  return 'error';
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** `work`, or a TimeoutError after `ms`: a hung dependency must not hold the bundle. */
export async function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimeoutError()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** One part of the bundle: its data, or `{ unavailable: "<what> (<code>)" }`. */
export async function part(what: string, ms: number, work: () => Promise<unknown>): Promise<unknown> {
  try {
    return await within(ms, work);
  } catch (err) {
    return { unavailable: `${what} (${reason(err)})` };
  }
}

/**
 * A config value with every string reduced to set / not set: strings in config are where
 * addresses, URLs and secrets live. Numbers and booleans are shown as they are.
 */
export function masked(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return 'not set';
  if (typeof value === 'string') return 'set';
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.length === 0 ? 'not set' : 'set';
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, masked(v)]));
  return 'set';
}
