import { isIP } from 'node:net';
import { GatewayError, type EgressAllowEntry, type Logger, type SandboxClient, type Store } from '../../kernel/index.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    /** Pushing the instance admins' allow-list to `svc egress` failed (logged when it starts failing, not on every retry). */
    'sandbox.egress_push_failed': { entries: number };
  }
}

/** Whether the egress proxy holds the instance admins' list, as this replica last saw. */
export type PushState = 'ok' | 'failed' | 'not_configured' | 'pending';

interface Row { host: string; port: number | string; allow_private: number | boolean }

const hostname = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host as the proxy matches it: lower case, no trailing dot, IPv6 without brackets; 400 otherwise. */
export function egressHost(raw: string): string {
  let h = raw.trim().toLowerCase().replace(/\.$/, '');
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (isIP(h) || hostname.test(h)) return h;
  throw new GatewayError('invalid_request', 'host must be a host name or an IP address, without scheme or port.', { param: 'host' });
}

/**
 * The instance admins' egress allow-list (SPEC.md: "an allow-list of host:port set by instance
 * admins"), kept in the database and pushed whole to `svc egress` (which holds no database
 * credentials): at start, after each change, and every `pushIntervalMs`, so a restarted proxy
 * gets it back and every replica converges on the stored list. Pushing needs SVC_EGRESS_URL and
 * SVC_EGRESS_SECRET; without them the proxy keeps its own SVC_EGRESS_ALLOW.
 */
export class EgressAllowList {
  state: PushState = 'pending';
  private timer?: NodeJS.Timeout;

  constructor(private readonly store: Store, private readonly client: SandboxClient, private readonly canPush: boolean, private readonly log: Logger) {
    if (!canPush) this.state = 'not_configured';
  }

  async entries(): Promise<EgressAllowEntry[]> {
    const rows = await this.store.execute<Row>('select host, port, allow_private from egress_allow_list order by host, port');
    return rows.map((r) => ({ host: r.host, port: Number(r.port), allowPrivate: Boolean(Number(r.allow_private)) }));
  }

  async add(e: EgressAllowEntry): Promise<void> {
    await this.store.execute(
      'insert into egress_allow_list (host, port, allow_private, created_at) values (?, ?, ?, ?) on conflict (host, port) do update set allow_private = excluded.allow_private',
      [e.host, e.port, e.allowPrivate ? 1 : 0, Date.now()],
    );
    await this.push();
  }

  /** False when the entry was not on the list. */
  async remove(host: string, port: number): Promise<boolean> {
    const gone = await this.store.execute('delete from egress_allow_list where host = ? and port = ? returning host', [host, port]);
    if (gone.length > 0) await this.push();
    return gone.length > 0;
  }

  /** Sends the stored list to the proxy; never throws (the next push retries). */
  async push(): Promise<PushState> {
    if (!this.canPush) return this.state;
    let entries: EgressAllowEntry[] = [];
    try {
      entries = await this.entries();
      await this.client.setEgressAllowList(entries);
      this.state = 'ok';
    } catch {
      if (this.state !== 'failed') this.log.warn('sandbox.egress_push_failed', { entries: entries.length });
      this.state = 'failed';
    }
    return this.state;
  }

  start(pushIntervalMs: number): void {
    if (!this.canPush) return;
    void this.push();
    this.timer = setInterval(() => void this.push(), pushIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
