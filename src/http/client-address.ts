/**
 * The client address that per-address limits count against (docs/security.md 10.11, the key-set
 * limit): one definition for the login UI, client authentication and the key set.
 *
 * - Behind a reverse proxy every request comes from the proxy, and counting per socket address
 *   would let one client's failures throttle everybody. The proxies named in
 *   GATEHOUSE_TRUSTED_PROXIES are trusted to append the client to X-Forwarded-For: the client is
 *   the right-most address there that is not itself a trusted proxy. A request from any other peer
 *   is counted by its socket address, whatever headers it sends (they are the client's to forge).
 * - IPv6 clients are counted per /64: one host usually holds a whole /64, and counting per /128
 *   would let it rotate through addresses and never be throttled.
 */
import net from 'node:net';
import { canonical, ipv6Groups, unmapped, type TrustedProxies } from '../config/ip-addresses.ts';

/** What a limit counts: an IPv4 address, or the /64 of an IPv6 address. */
export function limitKey(address: string): string {
  const plain = unmapped(address);
  if (!net.isIPv6(plain)) return plain;
  return `${ipv6Groups(plain).slice(0, 4).join(':')}::/64`;
}

/** The client's address (before limitKey): the socket peer, or behind trusted proxies the forwarded client. */
export function clientAddress(
  req: { socket: { remoteAddress?: string | undefined }; headers: Record<string, string | string[] | undefined> },
  trusted: TrustedProxies,
): string {
  const peer = unmapped(req.socket.remoteAddress ?? 'unknown');
  if (trusted.size === 0 || !trusted.has(canonical(peer))) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((hop) => unmapped(hop.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (net.isIP(hop) === 0) return peer; // a malformed chain: count the proxy rather than guess
    if (!trusted.has(canonical(hop))) return hop;
  }
  return peer;
}

/** The key a per-address limit counts this request under. */
export function limitKeyOf(
  req: { socket: { remoteAddress?: string | undefined }; headers: Record<string, string | string[] | undefined> },
  trusted: TrustedProxies,
): string {
  return limitKey(clientAddress(req, trusted));
}
