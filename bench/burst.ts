import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { rssMb } from './proc.js';
import type { Target } from './targets.js';

/** What one gateway's memory did around a hostile burst (issue 16: back under 1.5× idle within 30 s). */
export interface BurstFigures {
  /** RSS just before the burst (a fresh, idle gateway), MiB. */
  beforeMb: number;
  peakMb: number;
  /** RSS `seconds` after the burst ended, MiB. */
  afterMb: number;
  seconds: number;
  /** Distinct statuses the burst's requests got (`error` for a connection the gateway cut). */
  statuses: string[];
}

const MB = 1024 * 1024;

/** The hardening issue's burst (issue 9 item 4): this many bodies at once, of this many MiB. */
export const burstBodies = 40;
export const burstMb = 31;

/** One unauthenticated POST declaring and sending `mb` MiB of body, written as fast as the gateway reads it. */
function hostilePost(url: string, mb: number): Promise<string> {
  const chunk = Buffer.alloc(MB, 0x61);
  return new Promise((done) => {
    const u = new URL(url);
    const req = request(
      { host: u.hostname, port: u.port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': mb * MB, authorization: 'Bearer sk-not-a-key' } },
      (res) => {
        res.resume();
        res.on('end', () => done(String(res.statusCode)));
        res.on('error', () => done('error'));
      },
    );
    req.on('error', () => done('error'));
    let sent = 0;
    const write = (): void => {
      while (sent < mb) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/**
 * The hardening issue's burst: `bodies` concurrent unauthenticated requests of `mb` MiB each, then
 * RSS sampled until `seconds` after the last one ended. The bench runs it on freshly started
 * gateways after the scenarios (run.ts), so the load's figures and the burst's stay apart.
 */
export async function hostileBurst(t: Target, seconds: number, bodies = burstBodies, mb = burstMb): Promise<BurstFigures> {
  const pid = t.pid!;
  const beforeMb = rssMb(pid);
  let peakMb = beforeMb;
  const timer = setInterval(() => (peakMb = Math.max(peakMb, rssMb(pid))), 50);
  try {
    const statuses = await Promise.all(Array.from({ length: bodies }, () => hostilePost(t.url, mb)));
    for (let s = 0; s < seconds; s++) await sleep(1000);
    return { beforeMb, peakMb, afterMb: rssMb(pid), seconds, statuses: [...new Set(statuses)].sort() };
  } finally {
    clearInterval(timer);
  }
}
