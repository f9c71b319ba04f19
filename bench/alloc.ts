import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { root } from './child.js';
import { measure, type Scenario } from './scenarios.js';
import type { Target } from './targets.js';

/** A node of V8's sampling heap profile. */
export interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** What one sampled measurement found. */
export interface AllocationSample {
  bytesPerRequest: number;
  requests: number;
  head: HeapNode;
}

/** Node flags and environment that load the allocation probe (alloc-probe.ts) into a gateway. */
export function allocProbe(logDir: string, name: string): { flags: string[]; env: NodeJS.ProcessEnv } {
  return { flags: ['--import', join(root, 'dist/bench/alloc-probe.js')], env: { BENCH_ALLOC_FILE: join(logDir, `${name}.heapprofile`) } };
}

const total = (n: HeapNode): number => n.children.reduce((sum, c) => sum + total(c), n.selfSize);

async function waitFor(file: string, what: string): Promise<void> {
  for (let i = 0; i < 250 && !existsSync(file); i++) await sleep(20);
  if (!existsSync(file)) throw new Error(`allocation probe: no ${what} (${file})`);
}

/**
 * Runs `scenario` against a target started with the probe while V8's sampling heap profiler counts
 * what the gateway allocates (`allocated`: every byte, garbage included) or keeps past the young
 * generation (`promoted`). Bytes per request do not depend on how busy the machine is, so builds
 * and gateways compare where timings cannot.
 */
export async function sampleAllocations(target: Target, scenario: Scenario, seconds: number, mockPid: number, mode: 'allocated' | 'promoted'): Promise<AllocationSample> {
  const file = target.allocFile;
  if (!target.pid || !file) throw new Error(`${target.name} has no allocation probe`);
  for (const f of [file, `${file}.started`]) rmSync(f, { force: true });
  writeFileSync(`${file}.mode`, mode);
  process.kill(target.pid, 'SIGHUP');
  await waitFor(`${file}.started`, 'start');
  const figures = await measure(scenario, target, seconds, mockPid);
  process.kill(target.pid, 'SIGHUP');
  await waitFor(file, 'profile');
  await sleep(100);
  const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode }).head;
  const requests = figures.requests ?? 0;
  return { bytesPerRequest: requests ? total(head) / requests : NaN, requests, head };
}

/**
 * Both figures of one running target at `scenario`: promoted first, then a few seconds of load
 * nobody samples, then allocated. The order matters for the promoted figure: right after a
 * sampling session that also counted what scavenges collect, the same process promoted 1.6–7.9 KB
 * a request in scale-out (a settle of 2 s after it still 1.6–2.0) where, sampled first, it promoted
 * 0.41–0.71 KB (bench/README.md "Twentieth look"). The allocated figure counts every byte, garbage
 * included, so what the promoted sample left behind does not change it; the unsampled seconds let
 * the code the sample's closing collections deoptimized be optimized again first.
 */
export async function sampleBoth(target: Target, scenario: Scenario, seconds: number, mockPid: number): Promise<{ allocated: AllocationSample; promoted: AllocationSample }> {
  const promoted = await sampleAllocations(target, scenario, seconds, mockPid, 'promoted');
  await measure(scenario, target, 2, mockPid);
  const allocated = await sampleAllocations(target, scenario, seconds, mockPid, 'allocated');
  return { allocated, promoted };
}
