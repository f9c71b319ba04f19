import { FeedError } from './list.js';

/**
 * undici (~11 MB of RSS once imported, bench/README "Third pass") is loaded with the first fetch:
 * an instance without a feed URL, the default, never holds it. Nothing else on the service's
 * paths uses it since the upstream calls moved to node:http.
 */
let undici: Promise<typeof import('undici')> | undefined;

/** Socket-level failures that mean nothing answered at the address. */
const unreachableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/**
 * GETs the feed document (redirects followed) within `timeoutMs` for the whole exchange and at most
 * `maxBytes` of body. Failures become FeedError codes: `timeout`, `unreachable`, `http_error`
 * (with the status), `too_large`.
 */
export async function fetchList(url: string, timeoutMs: number, maxBytes: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const { fetch } = await (undici ??= import('undici'));
    const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new FeedError('http_error', `the feed answered HTTP ${res.status}`, res.status);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new FeedError('too_large', `the feed document is over ${maxBytes} bytes`);
    }
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body ?? []) {
      size += (chunk as Uint8Array).byteLength;
      if (size > maxBytes) throw new FeedError('too_large', `the feed document is over ${maxBytes} bytes`);
      parts.push(Buffer.from(chunk as Uint8Array));
    }
    return Buffer.concat(parts).toString('utf8');
  } catch (err) {
    if (err instanceof FeedError) throw err;
    if (signal.aborted) throw new FeedError('timeout', `no whole answer within ${timeoutMs} ms`);
    const code = causeCode(err);
    throw new FeedError(code && !unreachableCodes.has(code) ? 'error' : 'unreachable', `the feed could not be fetched${code ? ` (${code})` : ''}`);
  }
}
