import type { FetchLike } from '@modelcontextprotocol/client';
import { cappedFetch } from '../capped-fetch.js';

/** svc was about to contact an origin the instance admins have not allowed (during a sign-in or a refresh). */
export class OriginNotAllowed extends Error {
  constructor(readonly origin: string) {
    super('origin not allowed');
  }
}

/**
 * The fetch every OAuth request of svc goes through (metadata, registration, token): the
 * authorization server is contacted from svc, so its origin must be on the instance's allow-list
 * like the tool server's (an admin-entered server could otherwise point svc at any address);
 * no redirects, a response size cap and a time limit, as for tool servers.
 */
export function guardedFetch(allowed: (url: string) => Promise<boolean>, limits: { maxBytes: number; timeoutMs: number }): FetchLike {
  const capped = cappedFetch(limits.maxBytes);
  return async (url, init) => {
    const target = new URL(String(url));
    if (!(await allowed(target.href))) throw new OriginNotAllowed(target.origin);
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    return capped(target, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
  };
}
