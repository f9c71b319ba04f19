import { request, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { EgressAllowEntry, Reach, SandboxClient, SandboxExit, SandboxSession, SandboxStart } from '../../kernel/index.js';

export interface SandboxClientOptions {
  /** `http://sandbox:7070`; empty when command-line tool servers are not set up. */
  sandboxUrl: string;
  sandboxSecret: string;
  /** `http://egress:3128`. */
  egressUrl: string;
  egressSecret: string;
  /** How long a health probe or a connection attempt may take. */
  timeoutMs: number;
}

const protocol = 'svc-sandbox.v1';
/** The sandbox's own message limit by default (SVC_SANDBOX_MAX_MESSAGE_BYTES); a frame adds its envelope. */
const defaultMaxMessageBytes = 10 * 1024 * 1024;
const frameOverhead = 1024;

/** The main service's client of `svc sandbox` and `svc egress` (SandboxClientToken). */
export function createSandboxClient(o: SandboxClientOptions): SandboxClient {
  return {
    configured: o.sandboxUrl !== '',
    open: (start) => new Session(o, start),
    async reachability() {
      return { sandbox: await probe(o.sandboxUrl, o.timeoutMs), egress: await probe(o.egressUrl, o.timeoutMs) };
    },
    async setEgressAllowList(entries: readonly EgressAllowEntry[]) {
      if (!o.egressUrl) throw new Error('egress proxy not configured');
      const res = await fetch(new URL('/v1/allow-list', o.egressUrl), {
        method: 'PUT',
        headers: { authorization: `Bearer ${o.egressSecret}`, 'content-type': 'application/json' },
        body: JSON.stringify(entries),
        signal: AbortSignal.timeout(o.timeoutMs),
      });
      if (res.status !== 200) throw new Error(`egress proxy answered ${res.status}`);
    },
  };
}

async function probe(base: string, timeoutMs: number): Promise<Reach> {
  if (!base) return 'not_configured';
  try {
    const res = await fetch(new URL('/healthz', base), { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200 ? 'reachable' : 'unreachable';
  } catch {
    return 'unreachable';
  }
}

/** One call over an upgraded HTTP connection carrying NDJSON frames both ways. */
class Session implements SandboxSession {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly exited: Promise<SandboxExit>;
  private socket: Socket | null = null;
  private req: ClientRequest | null = null;
  private settle!: (exit: SandboxExit) => void;
  private ended = false;

  constructor(private readonly o: SandboxClientOptions, private readonly spec: SandboxStart) {
    this.exited = new Promise((resolve) => (this.settle = resolve));
  }

  /** Resolves once a slot runs the tool server; rejects (and `exited` says why) otherwise. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.o.sandboxUrl) return this.finish({ reason: 'unreachable', code: null }, reject);
      const url = new URL('/v1/calls', this.o.sandboxUrl);
      const req = (this.req = request({ host: url.hostname, port: url.port || 80, path: url.pathname, timeout: this.o.timeoutMs, headers: { connection: 'Upgrade', upgrade: protocol, authorization: `Bearer ${this.o.sandboxSecret}` } }));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => this.finish({ reason: 'unreachable', code: null }, reject));
      req.on('response', (res) => {
        res.resume();
        this.finish({ reason: 'unreachable', code: null }, reject);
      });
      req.on('upgrade', (_res, socket) => {
        if (this.ended) return void socket.destroy(); // closed while connecting: start nothing
        req.setTimeout(0);
        socket.setTimeout(0);
        this.socket = socket;
        let buffered = '';
        socket.setEncoding('utf8');
        // The sandbox enforces the limit; this bound only keeps a broken peer from filling memory.
        const maxFrame = (this.spec.maxMessageBytes ?? defaultMaxMessageBytes) + frameOverhead;
        socket.on('data', (text: string) => {
          buffered += text;
          for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            let frame: Frame;
            try {
              frame = JSON.parse(line) as Frame;
            } catch {
              return this.finish({ reason: 'unreachable', code: null }, reject); // not the sandbox's protocol
            }
            this.frame(frame, resolve, reject);
          }
          if (buffered.length > maxFrame) this.finish({ reason: 'message_too_large', code: null }, reject);
        });
        socket.on('error', () => this.finish({ reason: 'unreachable', code: null }, reject));
        // The sandbox ends every call with an `exit` frame; a connection that drops without one means it went away.
        socket.on('close', () => this.finish({ reason: 'unreachable', code: null }, reject));
        const { command, args, env, maxMessageBytes } = this.spec;
        socket.write(JSON.stringify({ type: 'start', command, args, env: env ?? {}, ...(maxMessageBytes ? { maxMessageBytes } : {}) }) + '\n');
      });
      req.end();
    });
  }

  async send(message: unknown): Promise<void> {
    if (!this.socket || this.ended) throw new Error('sandbox call is not running');
    this.socket.write(JSON.stringify({ type: 'message', message }) + '\n');
  }

  async close(): Promise<void> {
    this.socket?.end();
    if (!this.socket) this.req?.destroy();
    this.finish({ reason: 'closed', code: null });
  }

  private frame(f: Frame, resolve: () => void, reject: (e: Error) => void): void {
    if (f.type === 'ready') return resolve();
    if (f.type === 'message') return this.onmessage?.(f.message);
    if (f.type === 'exit') this.finish({ reason: f.reason, code: f.code }, reject);
  }

  private finish(exit: SandboxExit, reject?: (e: Error) => void): void {
    if (this.ended) return;
    this.ended = true;
    this.socket?.destroy();
    this.settle(exit);
    reject?.(new Error(`sandbox call ended: ${exit.reason}`));
    if (exit.reason !== 'closed' && exit.reason !== 'exited') this.onerror?.(new Error(`sandbox call ended: ${exit.reason}`));
    this.onclose?.();
  }
}

type Frame = { type: 'ready'; slot: number } | { type: 'message'; message: unknown } | { type: 'exit'; reason: SandboxExit['reason']; code: number | null };
