import type { Client, PriorDiscovery } from '@modelcontextprotocol/client';

/**
 * How long a learnt revision is trusted before the server is probed again. A server can be
 * upgraded, and a remembered 2025 verdict would otherwise hold forever (an upgraded server still
 * answers `initialize`; the SDK's PriorDiscovery notes say to date such verdicts).
 */
export const revisionHorizonMs = 10 * 60_000;
const maxServers = 1000;

/**
 * The protocol revision each tool server spoke when this replica last probed it (issue 27 item 12).
 * The first connection negotiates (`server/discover`, then `initialize` for a 2025-era server);
 * later ones within the horizon pass what was learnt as the SDK's `prior`: a 2025 server gets its
 * `initialize` straight away instead of a probe that fails first, and a 2026-07-28 server's
 * discover result is adopted with no round trip. Keyed by the registered server (its id), never
 * by address alone: the SDK says to reuse a verdict only within one authorization context. A
 * connection that fails on the protocol with a remembered revision forgets it, so the next use
 * probes again.
 */
class Revisions {
  private readonly known = new Map<string, { prior: PriorDiscovery; at: number }>();

  prior(serverId: string): PriorDiscovery | undefined {
    const k = this.known.get(serverId);
    if (k && Date.now() - k.at <= revisionHorizonMs) return k.prior;
    this.known.delete(serverId);
    return undefined;
  }

  /** What a connection that probed negotiated. */
  learn(serverId: string, client: Client): void {
    const discover = client.getDiscoverResult();
    const era = client.getProtocolEra();
    const prior: PriorDiscovery | null = era === 'legacy' ? { kind: 'legacy' } : era === 'modern' && discover ? { kind: 'modern', discover } : null;
    if (!prior) return;
    if (this.known.size >= maxServers) this.known.delete(this.known.keys().next().value!);
    this.known.set(serverId, { prior, at: Date.now() });
  }

  forget(serverId: string): void {
    this.known.delete(serverId);
  }
}

/** This replica's memory (module state, like the tool lists' cache: nothing shared between replicas). */
export const revisions = new Revisions();
