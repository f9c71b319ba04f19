import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Memory and process-count limits per call through Linux control groups: cgroups v2 (unified) when
 * the sandbox's own group can delegate `memory` and `pids`, else the v1 `memory` and `pids`
 * hierarchies (hosts still on the hybrid layout). Without either the sandbox refuses to start:
 * rlimits alone cannot bound a tool server's processes and memory as a whole.
 */
export interface CallGroup {
  /** Files a process writes its pid into to join the group. */
  readonly joinFiles: string[];
  oomKilled(): boolean;
  /** Kills what is left and removes the group; false if something could not be removed. */
  destroy(): Promise<boolean>;
}

export interface Cgroups {
  readonly mode: 'cgroup2' | 'cgroup1';
  create(name: string, memoryBytes: number, maxProcesses: number): CallGroup;
  /** Removes this process's own groups (at exit); false when one is left (a call group still in it). */
  close(): boolean;
}

const root = '/sys/fs/cgroup';

function ownPath(controller: string): string | null {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, ctrls, path] = line.split(':');
    if (path !== undefined && (controller === '' ? ctrls === '' && line.startsWith('0::') : ctrls!.split(',').includes(controller))) return path;
  }
  return null;
}

const read = (f: string): string => { try { return readFileSync(f, 'utf8'); } catch { return ''; } };
const removeEmpty = (dirs: string[]): boolean => {
  let left = 0;
  for (const d of dirs) try { rmdirSync(d); } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left++; }
  return left === 0;
};
const pids = (dirs: string[]): number[] => dirs.flatMap((d) => read(join(d, 'cgroup.procs')).split('\n').filter(Boolean).map(Number));

/** Kills every process left in the groups, then removes them; retried while the kernel reaps. */
async function teardown(dirs: string[]): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    for (const pid of pids(dirs)) try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    let left = 0;
    for (const d of dirs) {
      if (!existsSync(d)) continue;
      try { rmdirSync(d); } catch { left++; }
    }
    if (left === 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

function v2(): Cgroups | null {
  const own = ownPath('');
  if (own === null || !existsSync(join(root, 'cgroup.controllers'))) return null;
  const base = join(root, own);
  if (!/\bmemory\b/.test(read(join(base, 'cgroup.controllers'))) || !/\bpids\b/.test(read(join(base, 'cgroup.controllers')))) return null;
  // A group with processes cannot hand controllers down: move this process into a leaf first.
  const self = join(base, 'supervisor');
  const calls = join(base, 'calls');
  mkdirSync(self, { recursive: true });
  writeFileSync(join(self, 'cgroup.procs'), String(process.pid));
  writeFileSync(join(base, 'cgroup.subtree_control'), '+memory +pids');
  mkdirSync(calls, { recursive: true });
  writeFileSync(join(calls, 'cgroup.subtree_control'), '+memory +pids');
  return {
    mode: 'cgroup2',
    create(name, memoryBytes, maxProcesses) {
      const dir = join(calls, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), String(memoryBytes));
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
      writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
      return {
        joinFiles: [join(dir, 'cgroup.procs')],
        oomKilled: () => /\boom_kill [1-9]/.test(read(join(dir, 'memory.events'))),
        destroy: () => teardown([dir]),
      };
    },
    close: () => removeEmpty([calls]),
  };
}

function v1(): Cgroups | null {
  const mem = ownPath('memory');
  const pid = ownPath('pids');
  if (mem === null || pid === null || !existsSync(join(root, 'memory')) || !existsSync(join(root, 'pids'))) return null;
  const memBase = join(root, 'memory', mem, `svc-sandbox-${process.pid}`);
  const pidBase = join(root, 'pids', pid, `svc-sandbox-${process.pid}`);
  mkdirSync(memBase, { recursive: true });
  mkdirSync(pidBase, { recursive: true });
  return {
    mode: 'cgroup1',
    create(name, memoryBytes, maxProcesses) {
      const m = join(memBase, name);
      const p = join(pidBase, name);
      mkdirSync(m);
      mkdirSync(p);
      writeFileSync(join(m, 'memory.limit_in_bytes'), String(memoryBytes));
      // Swap would let a call use more than its memory; the limit covers memory plus swap where the kernel counts swap.
      if (existsSync(join(m, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(m, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
      writeFileSync(join(p, 'pids.max'), String(maxProcesses));
      return {
        joinFiles: [join(m, 'cgroup.procs'), join(p, 'cgroup.procs')],
        oomKilled: () => /\boom_kill [1-9]/.test(read(join(m, 'memory.oom_control'))) || /^[1-9]/.test(read(join(m, 'memory.failcnt'))) && /under_oom 1/.test(read(join(m, 'memory.oom_control'))),
        destroy: () => teardown([m, p]),
      };
    },
    close: () => removeEmpty([memBase, pidBase]),
  };
}

/** The control groups this host offers, or a reason why none can be used. */
export function openCgroups(): Cgroups | string {
  try {
    return v2() ?? v1() ?? 'no cgroup memory and pids controllers available';
  } catch (err) {
    return `cgroups not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
