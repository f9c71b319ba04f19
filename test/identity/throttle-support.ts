import { Agent, request } from 'node:http';
import type { Reply } from './support.js';

/**
 * The throttle's settings in these tests: small counts and short waits so a test runs in seconds.
 * An account waits after its 3rd failure and locks at its 6th; an address waits after its 15th
 * and locks at its 20th; a lock lasts a minute.
 */
export const throttleConfig = {
  signInThrottle: {
    account: { freeFailures: 3, lockAfterFailures: 6 },
    address: { freeFailures: 15, lockAfterFailures: 20 },
    firstDelayMs: 100,
    lockSeconds: 60,
    windowSeconds: 600,
  },
};

/** A wrong password that doubles as a canary: it must never reach a log line or a response. */
export const wrongPassword = 'canary-wrong-pw-4d91e2';

const agents = new Map<string, Agent>();

/**
 * The server takes the client address from the socket (no proxy is trusted by default), so a
 * test speaks from another address by binding its connections to another loopback address:
 * Linux routes all of 127.0.0.0/8 to the loopback interface.
 */
function agentFrom(address: string): Agent {
  let a = agents.get(address);
  if (!a) agents.set(address, (a = new Agent({ keepAlive: true, localAddress: address })));
  return a;
}

export async function closeAgents(): Promise<void> {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

export interface FromOptions {
  from?: string;
  auth?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One admin API call under /admin/v1 from the loopback address `from` (127.0.0.1 by default). */
export async function callFrom(url: string, method: string, path: string, o: FromOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.auth) headers.authorization = `Bearer ${o.auth}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
  const res = await new Promise<import('node:http').IncomingMessage>((done, fail) => {
    const req = request(`${url}/admin/v1${path}`, { method, headers, agent: agentFrom(o.from ?? '127.0.0.1') }, done);
    req.once('error', fail);
    req.end(payload);
  });
  let text = '';
  for await (const chunk of res) text += String(chunk);
  const h = new Headers();
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
  return { status: res.statusCode ?? 0, text, body: text ? JSON.parse(text) : null, headers: h };
}

export const signInFrom = (url: string, email: string, password: string, from?: string, headers?: Record<string, string>) =>
  callFrom(url, 'POST', '/sessions', { from, body: { email, password }, headers });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Wrong passwords for `email` from `from` until the account or address is locked; a 429 that is
 * only a wait is waited out, as a patient attacker would. Returns every status seen, in order.
 */
export async function failUntilLocked(url: string, email: string | ((i: number) => string), from: string, headers?: (i: number) => Record<string, string>, max = 60): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < max; i++) {
    const r = await signInFrom(url, typeof email === 'string' ? email : email(i), wrongPassword, from, headers?.(i));
    seen.push(r.status);
    if (r.status === 429) {
      if (Number(r.headers.get('retry-after')) > 5) return seen;
      await sleep(120);
    }
  }
  return seen;
}
