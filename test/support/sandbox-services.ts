import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { copyFileSync, renameSync, existsSync, linkSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const svcBin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
/** The folder holding the probe tool server, bound read-only into the sandbox. */
export const supportDir = dirname(fileURLToPath(import.meta.url));
export const probeTool = join(supportDir, 'mcp-stdio-tool.js');

/**
 * The Node runtime for inside the sandbox at a path the slots' unprivileged users can reach (this
 * machine's node lives under /root, which they cannot enter): a hard link, or a copy, in /tmp.
 */
export function sandboxRuntime(): string {
  const size = statSync(process.execPath).size;
  const dir = join(tmpdir(), `svc-sandbox-runtime-${size}`);
  const node = join(dir, 'bin', 'node');
  if (existsSync(node) && statSync(node).size === size) return node;
  mkdirSync(join(dir, 'bin'), { recursive: true, mode: 0o755 });
  try {
    linkSync(process.execPath, node);
  } catch (err) {
    // Another test process (a second checkout's run, a suite started by hand) may have linked it a
    // moment ago: never copy over a link, which would write into this very binary.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return node;
    const staged = `${node}.${process.pid}`;
    copyFileSync(process.execPath, staged);
    renameSync(staged, node);
  }
  return node;
}

/** `svc sandbox` or `svc egress` as a real process, its JSON log lines collected. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  url: string;
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  waitFor(event: string | string[], timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startServiceProcess(command: 'sandbox' | 'egress', env: Record<string, string>): Promise<ServiceProcess> {
  const runtime = command === 'sandbox' ? { SVC_SANDBOX_RUNTIME: sandboxRuntime() } : {};
  const child = spawn(process.execPath, [svcBin, command], { env: { PATH: process.env.PATH ?? '', ...runtime, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let rest = '';
  child.stdout!.setEncoding('utf8').on('data', (t: string) => {
    rest += t;
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l.trim()) logs.push(JSON.parse(l) as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.resume();
  // 'close' comes after the last log line was read, 'exit' may come before.
  let closed = false;
  const exited = new Promise<number | null>((r) => child.once('close', (c) => { closed = true; for (const w of waiters.splice(0)) w(); r(c); }));
  const waitFor = async (event: string | string[], timeoutMs = 10_000): Promise<Record<string, unknown>> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const hit = logs.find((l) => (Array.isArray(event) ? event : [event]).includes(String(l.event)));
      if (hit) return hit;
      if (Date.now() > until || closed) throw new Error(`no ${String(event)} from svc ${command}: ${JSON.stringify(logs)}`);
      await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 100); });
    }
  };
  const first = await waitFor([`${command}.started`, `${command}.start_failed`]);
  if (first.event !== `${command}.started`) throw new Error(`svc ${command} did not start: ${JSON.stringify(first)}`);
  const port = Number(first.port);
  return {
    child, port, url: `http://127.0.0.1:${port}`, logs, exited, waitFor,
    stop: async () => {
      if (!closed) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A plain HTTP server on loopback answering `hello` (a destination behind the proxy). */
export async function helloServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end('hello'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
