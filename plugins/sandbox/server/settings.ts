import { accessSync, constants } from 'node:fs';

/** The sandbox's settings, from the environment (it runs in its own container, without the database). */
export interface SandboxSettings {
  host: string;
  port: number;
  /** Shared secret the main service sends as `Authorization: Bearer …`. */
  secret: string;
  slots: number;
  workDir: string;
  /** The Node runtime used inside calls (the in-sandbox relay runs on it); bound read-only. */
  runtime: string;
  /** Host user of slot N is uidBase + N: calls run unprivileged, and no two slots share an owner. */
  uidBase: number;
  /** Allowed commands: name → absolute path on the sandbox host. */
  commands: Record<string, string>;
  /** Host paths bound read-only into every call (pre-installed tool servers, runtimes). */
  readOnly: string[];
  egressHost: string;
  egressPort: number;
  memoryBytes: number;
  maxProcesses: number;
  cpuSeconds: number;
  callTimeoutMs: number;
  maxMessageBytes: number;
  /** How long a call waits for a free slot before it ends with `no_free_slot`. */
  queueMs: number;
}

const num = (v: string | undefined, d: number, name: string): number => {
  const n = v === undefined || v === '' ? d : Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};

/**
 * SVC_SANDBOX_HOST (0.0.0.0), SVC_SANDBOX_PORT (7070), SVC_SANDBOX_SECRET (required),
 * SVC_SANDBOX_SLOTS (4), SVC_SANDBOX_WORK_DIR (/var/lib/svc-sandbox), SVC_SANDBOX_RUNTIME (this
 * node), SVC_SANDBOX_UID_BASE (61000), SVC_SANDBOX_COMMANDS (`name=/abs/path,…`; default
 * `node=<runtime>`), SVC_SANDBOX_READ_ONLY (`/path,…`),
 * SVC_SANDBOX_EGRESS (`host:port` of `svc egress`, default egress:3128), SVC_SANDBOX_MEMORY_MB
 * (512), SVC_SANDBOX_MAX_PROCESSES (64), SVC_SANDBOX_CPU_SECONDS (60), SVC_SANDBOX_CALL_TIMEOUT_MS
 * (120000), SVC_SANDBOX_QUEUE_MS (10000), SVC_SANDBOX_MAX_MESSAGE_BYTES (10 MB, the stdio limit MCP clients have).
 */
export function readSettings(env: NodeJS.ProcessEnv): SandboxSettings {
  const secret = env.SVC_SANDBOX_SECRET ?? '';
  if (secret.length < 16) throw new Error('SVC_SANDBOX_SECRET must be set (at least 16 characters)');
  const runtime = env.SVC_SANDBOX_RUNTIME || process.execPath;
  accessSync(runtime, constants.X_OK);
  const commands: Record<string, string> = {};
  for (const item of (env.SVC_SANDBOX_COMMANDS ?? `node=${runtime}`).split(',').filter(Boolean)) {
    const [name, path] = item.split('=');
    if (!name || !path?.startsWith('/')) throw new Error('SVC_SANDBOX_COMMANDS items are name=/absolute/path');
    accessSync(path, constants.X_OK);
    commands[name] = path;
  }
  const [egressHost, egressPort] = (env.SVC_SANDBOX_EGRESS ?? 'egress:3128').split(':');
  return {
    host: env.SVC_SANDBOX_HOST ?? '0.0.0.0',
    port: Number(env.SVC_SANDBOX_PORT ?? 7070),
    secret,
    slots: num(env.SVC_SANDBOX_SLOTS, 4, 'SVC_SANDBOX_SLOTS'),
    runtime,
    uidBase: num(env.SVC_SANDBOX_UID_BASE, 61_000, 'SVC_SANDBOX_UID_BASE'),
    workDir: env.SVC_SANDBOX_WORK_DIR ?? '/var/lib/svc-sandbox',
    commands,
    readOnly: (env.SVC_SANDBOX_READ_ONLY ?? '').split(',').filter(Boolean),
    egressHost: egressHost || 'egress',
    egressPort: num(egressPort, 3128, 'SVC_SANDBOX_EGRESS port'),
    memoryBytes: num(env.SVC_SANDBOX_MEMORY_MB, 512, 'SVC_SANDBOX_MEMORY_MB') * 1024 * 1024,
    maxProcesses: num(env.SVC_SANDBOX_MAX_PROCESSES, 64, 'SVC_SANDBOX_MAX_PROCESSES'),
    cpuSeconds: num(env.SVC_SANDBOX_CPU_SECONDS, 60, 'SVC_SANDBOX_CPU_SECONDS'),
    callTimeoutMs: num(env.SVC_SANDBOX_CALL_TIMEOUT_MS, 120_000, 'SVC_SANDBOX_CALL_TIMEOUT_MS'),
    queueMs: num(env.SVC_SANDBOX_QUEUE_MS, 10_000, 'SVC_SANDBOX_QUEUE_MS'),
    maxMessageBytes: num(env.SVC_SANDBOX_MAX_MESSAGE_BYTES, 10 * 1024 * 1024, 'SVC_SANDBOX_MAX_MESSAGE_BYTES'),
  };
}
