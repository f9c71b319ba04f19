import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, rmSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type { SandboxExitReason, SandboxStart, Logger } from '../../../kernel/index.js';
import type { Cgroups } from './cgroup.js';
import { bwrapArgs } from './jail.js';
import { readLines } from './lines.js';
import type { Slot, SlotPool } from './slots.js';
import type { SandboxSettings } from './settings.js';

export interface CallDeps {
  s: SandboxSettings;
  pool: SlotPool;
  cgroups: Cgroups;
  launcher: string;
  log: Logger;
}

/**
 * Joins the control groups named by the first arguments (as root), then becomes the rest of the
 * command line: prlimit, then setpriv dropping to the slot's own unprivileged host user, then
 * bubblewrap (which makes its namespaces as that user, without any privilege).
 */
const joinAndExec = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

/** A call under way, as the sandbox's stop sees it. */
export interface RunningCall {
  /** Ends it now: the connection drops without an `exit` frame (the client reports the sandbox gone) and the tool server is killed. */
  end(): void;
  /** Settles once the call is over and its slot cleaned up (control groups removed, scratch deleted). */
  readonly cleaned: Promise<void>;
}

/**
 * One call in one slot: a fresh scratch folder and control group, the tool server started under
 * bubblewrap, its stdout lines sent as `message` frames and the client's `message` frames written
 * to its stdin, until it exits, the client leaves, or a limit ends it. Then everything is removed;
 * what cannot be removed quarantines the slot.
 */
export function runCall(d: CallDeps, slot: Slot, start: SandboxStart, socket: Duplex, send: (frame: object) => void): RunningCall {
  const began = Date.now();
  slot.calls++;
  rmSync(slot.scratch, { recursive: true, force: true });
  const uid = d.s.uidBase + slot.index;
  mkdirSync(slot.scratch, { mode: 0o700 });
  chownSync(slot.scratch, uid, uid);
  const group = d.cgroups.create(`slot${slot.index}-call${slot.calls}`, d.s.memoryBytes, d.s.maxProcesses);
  const argv = bwrapArgs(d.s, { scratch: slot.scratch, egressSocket: slot.egressSocket, launcher: d.launcher }, d.s.commands[start.command]!, start.args, start.env ?? {});
  const child = spawn('/bin/sh', ['-c', joinAndExec, 'sh', String(group.joinFiles.length), ...group.joinFiles, 'prlimit', `--cpu=${d.s.cpuSeconds}`, '--core=0', '--',
    'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--', 'bwrap', ...argv], {
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true,
  });
  send({ type: 'ready', slot: slot.index });

  let reason: SandboxExitReason | null = null;
  const stop = (why: SandboxExitReason): void => {
    reason ??= why;
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
  };
  const timer = setTimeout(() => stop('time_limit'), d.s.callTimeoutMs);

  readLines(child.stdout!, start.maxMessageBytes ?? d.s.maxMessageBytes, (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // a tool server's stray output is not a message; MCP clients skip it too
    }
    send({ type: 'message', message });
  }, () => stop('message_too_large'));

  readLines(socket, d.s.maxMessageBytes + 1024, (line) => {
    let frame: { type?: string; message?: unknown };
    try {
      frame = JSON.parse(line) as typeof frame;
    } catch {
      return stop('closed');
    }
    if (frame.type === 'message' && child.stdin?.writable) child.stdin.write(JSON.stringify(frame.message) + '\n');
  }, () => stop('message_too_large'));
  child.stdin!.on('error', () => { /* the tool server went away; its exit is reported */ });
  // The client half-closing (its `close()`) ends the call as much as the connection dropping.
  socket.on('end', () => stop('closed'));
  socket.on('close', () => stop('closed'));
  socket.on('error', () => stop('closed'));

  child.on('error', () => stop('start_failed'));
  child.on('close', (code) => {
    clearTimeout(timer);
    stop('exited'); // kills anything the tool server left running in its session
    // 125-127: joining the control group, the launcher or the command itself failed before the tool ran.
    const early = code === 125 || code === 126 || code === 127;
    const why: SandboxExitReason = reason !== 'exited' ? reason! : group.oomKilled() ? 'memory_limit' : early ? 'start_failed' : 'exited';
    send({ type: 'exit', reason: why, code: why === 'exited' ? code : null });
    socket.end();
    d.log.info('sandbox.call_ended', { slot: slot.index, command: start.command, reason: why, duration_ms: Date.now() - began });
    cleanedUp(cleanUp(d, slot, group));
  });
  let cleanedUp!: (done: Promise<void>) => void;
  const cleaned = new Promise<void>((resolve) => (cleanedUp = (done) => void done.then(resolve, resolve)));
  return {
    end: () => {
      socket.destroy();
      stop('closed');
    },
    cleaned,
  };
}

async function cleanUp(d: CallDeps, slot: Slot, group: ReturnType<Cgroups['create']>): Promise<void> {
  const processesGone = await group.destroy();
  let scratchGone = true;
  try {
    rmSync(slot.scratch, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    scratchGone = false;
  }
  d.pool.release(slot, !processesGone ? 'processes_left' : !scratchGone ? 'scratch_not_removed' : null);
}
