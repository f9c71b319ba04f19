import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is `10.0.0.1`. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 4 ? 'ipv4' : 'ipv6');

/** The values of a header sent once or several times, split at commas, trimmed, empty ones dropped. */
function listOf(value: string | string[] | undefined): string[] {
  const all = Array.isArray(value) ? value.join(',') : (value ?? '');
  return all.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Who is at the other end of a request, and whether they reached svc over HTTPS, believing
 * `X-Forwarded-For` and `X-Forwarded-Proto` only from peers listed in `server.trustedProxies`
 * (addresses or CIDR ranges; none by default). Without a trusted proxy these headers are ignored,
 * so a client cannot pose as another address to dodge the sign-in throttle or fake an audit
 * entry's address. `Forwarded` (RFC 7239) and `X-Real-IP` are not read: nginx, Traefik, Caddy,
 * HAProxy and the cloud load balancers all set `X-Forwarded-For`, and one rule is easier to audit.
 *
 * @example
 * const trust = new ProxyTrust(['10.0.0.0/8']);
 * trust.clientAddress(req); // '203.0.113.7' from "X-Forwarded-For: 203.0.113.7" sent by 10.1.2.3
 */
export class ProxyTrust {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(trusted: readonly string[]) {
    for (const entry of trusted) {
      const [address, bits, extra] = entry.split('/');
      if (!address || !isIP(address) || extra !== undefined) throw new Error(`server.trustedProxies: '${entry}' is not an IP address or CIDR range`);
      if (bits === undefined) this.list.addAddress(address, family(address));
      else {
        const prefix = Number(bits);
        const max = isIP(address) === 4 ? 32 : 128;
        if (!/^\d{1,3}$/.test(bits) || prefix > max) throw new Error(`server.trustedProxies: '${entry}' has a bad prefix length`);
        this.list.addSubnet(address, prefix, family(address));
      }
    }
    this.empty = trusted.length === 0;
  }

  trusts(address: string): boolean {
    if (this.empty || !isIP(address)) return false;
    return this.list.check(address, family(address));
  }

  /**
   * The client's address: the socket's peer, or, when the peer is a trusted proxy, the nearest
   * address in `X-Forwarded-For` that is not itself a trusted proxy (read from the right: the
   * entries to the left of it were written by whoever sent the request, and may be forged).
   */
  clientAddress(req: IncomingMessage): string {
    let address = plain(req.socket.remoteAddress ?? '');
    if (!this.trusts(address)) return address;
    const hops = listOf(req.headers['x-forwarded-for']).map(plain);
    while (hops.length > 0 && this.trusts(address)) {
      const next = hops.pop()!;
      if (!isIP(next)) break;
      address = next;
    }
    return address;
  }

  /**
   * True when the client reached svc over HTTPS: a TLS socket, or a trusted proxy's
   * `X-Forwarded-Proto` saying `https` (its last value: the one the nearest proxy wrote).
   */
  secure(req: IncomingMessage): boolean {
    if ((req.socket as Partial<TLSSocket>).encrypted === true) return true;
    if (!this.trusts(plain(req.socket.remoteAddress ?? ''))) return false;
    return listOf(req.headers['x-forwarded-proto']).at(-1)?.toLowerCase() === 'https';
  }
}
