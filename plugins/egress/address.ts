import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/**
 * Private, loopback, link-local, shared, multicast and reserved ranges: a tool server must not
 * reach the instance's own network unless an admin allowed that destination explicitly.
 */
const internal = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) internal.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) internal.addSubnet(net, bits, 'ipv6');

/** True for an address the proxy must not reach without an explicit `allowPrivate` entry. */
export function isInternal(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return internal.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return internal.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The addresses a host name stands for, resolved once: the proxy checks these and connects to
 * the one it checked, so a name cannot resolve to a public address for the check and to
 * 127.0.0.1 for the connection (DNS rebinding).
 */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) return [bare];
  const found = await lookup(bare, { all: true, verbatim: true });
  return found.map((a) => a.address);
}
