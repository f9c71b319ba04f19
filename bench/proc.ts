import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Process figures from Linux's /proc: CPU time (user + system) and resident memory of one
 * process, read before and after a measurement. Elsewhere every figure reads as 0.
 */

/** Clock ticks per second, the unit of utime and stime in /proc/PID/stat. */
const ticksPerSecond = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time the process has used so far, in microseconds (user + system, its own threads included).
 *
 * @example
 * const before = cpuMicros(pid); …load…; const perRequest = (cpuMicros(pid) - before) / requests;
 */
export function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the numeric fields follow its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1e6) / ticksPerSecond;
  } catch {
    return 0;
  }
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Peak resident set size of the process so far (VmHWM), in MiB. */
export const peakRssMb = (pid: number): number => statusKb(pid, 'VmHWM') / 1024;

/** Current resident set size (VmRSS), in MiB. */
export const rssMb = (pid: number): number => statusKb(pid, 'VmRSS') / 1024;

/** Samples VmRSS every `everyMs` until stopped; returns the largest sample (MiB). */
export function sampleRss(pid: number, everyMs = 100): () => number {
  let max = rssMb(pid);
  const timer = setInterval(() => (max = Math.max(max, rssMb(pid))), everyMs);
  return () => {
    clearInterval(timer);
    return Math.max(max, rssMb(pid));
  };
}
