import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Duplex } from 'node:stream';
import { bearerMatches, createLogger, type Logger, type SandboxStart } from '../../../kernel/index.js';
import { openCgroups, type Cgroups } from './cgroup.js';
import { runCall, type RunningCall } from './call.js';
import { readLines } from './lines.js';
import { readSettings, type SandboxSettings } from './settings.js';
import { SlotPool } from './slots.js';
import './events.js';

/** A string a process can take as an argument or environment value (spawn refuses NUL bytes). */
const plain = (v: unknown): v is string => typeof v === 'string' && !v.includes('\0');
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The protocol name in `Upgrade:`; bumped if the frames ever change incompatibly. */
export const sandboxProtocol = 'svc-sandbox.v1';

/**
 * `svc sandbox`: runs command-line MCP tool servers, one call per slot, each under bubblewrap with
 * control-group limits (see plugins/sandbox/README.md). Settings: see readSettings. Exits 1 with
 * `sandbox.start_failed` when it cannot isolate calls, and with `sandbox.exhausted` when every
 * slot is quarantined.
 */
export async function runSandbox(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const log = createLogger((env.SVC_LOG_LEVEL as 'info' | undefined) ?? 'info');
  const fail = (reason: string): never => {
    log.fatal('sandbox.start_failed', { reason });
    process.exit(1);
  };
  let s: SandboxSettings;
  try {
    s = readSettings(env);
  } catch (err) {
    return fail((err as Error).message);
  }
  if (spawnSync('bwrap', ['--version']).status !== 0) return fail('bubblewrap (bwrap) is not installed');
  if (spawnSync('prlimit', ['--version']).status !== 0 || spawnSync('setpriv', ['--version']).status !== 0) return fail('prlimit or setpriv (util-linux) is not installed');
  if (process.getuid?.() !== 0) return fail('must start as root to set up control groups and slot users (calls run unprivileged)');
  let limits: Cgroups | null = null;
  const pool = new SlotPool(s, log, () => {
    limits?.close();
    process.exit(1);
  });
  try {
    await pool.open();
  } catch (err) {
    return fail(`work folder not usable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  // Control groups last: every later failure removes them again, so no start leaves one behind.
  const cgroups = openCgroups();
  if (typeof cgroups === 'string') {
    pool.close();
    return fail(cgroups);
  }
  limits = cgroups;
  const launcher = fileURLToPath(new URL('./launcher.js', import.meta.url));
  const running = new Set<RunningCall>();
  const server = serve(s, pool, cgroups, launcher, log, running);
  server.once('error', (err: NodeJS.ErrnoException) => {
    cgroups.close();
    fail(`cannot listen (${err.code ?? 'error'})`);
  });
  server.listen(s.port, s.host, () => {
    const a = server.address();
    log.info('sandbox.started', { host: s.host, port: typeof a === 'object' && a ? a.port : s.port, slots: s.slots, limits: cgroups.mode });
  });
  // A stop ends the calls under way (a container runtime kills the process seconds after asking, far
  // sooner than a call's time limit) and waits for their cleanup before removing its own control
  // groups: exiting first would leave the calls' groups behind (issue 27 item 13).
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    pool.close();
    server.close();
    const calls = [...running];
    for (const c of calls) c.end();
    const bound = new Promise<void>((done) => setTimeout(done, stopWaitMs).unref());
    void Promise.race([Promise.all(calls.map((c) => c.cleaned)), bound]).then(() => {
      log.info('sandbox.stopped', { calls_ended: calls.length, groups_removed: cgroups.close() });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** The longest a stop waits for the calls it ended to be cleaned up (killing and reaping takes well under a second). */
const stopWaitMs = 5000;

function serve(s: SandboxSettings, pool: SlotPool, cgroups: Cgroups, launcher: string, log: Logger, running: Set<RunningCall>) {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      const ok = pool.usable > 0;
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ status: ok ? 'ok' : 'down', slots: s.slots, free: pool.free, quarantined: s.slots - pool.usable }));
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found' } }));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const refuse = (status: string): void => void socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    if (req.url !== '/v1/calls' || req.headers.upgrade !== sandboxProtocol) return refuse('404 Not Found');
    if (!bearerMatches(req.headers.authorization, s.secret)) return refuse('401 Unauthorized');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: ${sandboxProtocol}\r\nconnection: Upgrade\r\n\r\n`);
    const send = (frame: object): void => void (socket.writable && socket.write(JSON.stringify(frame) + '\n'));
    const end = (reason: string): void => {
      send({ type: 'exit', reason, code: null });
      socket.end();
    };
    // The first frame says what to start; the call takes over the socket after it.
    let started = false;
    readLines(socket, 1 << 20, (line) => {
      if (started) return;
      started = true;
      let frame: { type?: string } & Partial<SandboxStart>;
      try {
        frame = JSON.parse(line) as typeof frame;
      } catch {
        return end('start_failed');
      }
      if (frame.type !== 'start' || typeof frame.command !== 'string' || !s.commands[frame.command] || !Array.isArray(frame.args) || !frame.args.every(plain)) return end('start_failed');
      const env = frame.env && typeof frame.env === 'object' ? Object.fromEntries(Object.entries(frame.env).filter(([k, v]) => envName.test(k) && plain(v))) : {};
      socket.removeAllListeners('data');
      // A call may ask for a smaller message limit than the sandbox's own, never a larger one.
      const asked = frame.maxMessageBytes;
      const maxMessageBytes = Number.isInteger(asked) && asked! > 0 ? Math.min(asked!, s.maxMessageBytes) : s.maxMessageBytes;
      const spec = { command: frame.command, args: frame.args, env, maxMessageBytes };
      void pool.acquire(s.queueMs).then((slot) => {
        if (!slot) return end('no_free_slot');
        if (socket.destroyed || !socket.readable) return pool.release(slot, null); // the client left while queued
        const call = runCall({ s, pool, cgroups, launcher, log }, slot, spec, socket, send);
        running.add(call);
        void call.cleaned.then(() => running.delete(call));
      });
    }, () => end('message_too_large'));
  });
  return server;
}
