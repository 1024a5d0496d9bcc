/**
 * IP addresses as configuration names them (GATEHOUSE_TRUSTED_PROXIES) and as the per-address limits
 * compare them (http/client-address.ts): parsing, IPv4-mapped IPv6 unwrapped, IPv6 written one way.
 */
import net from 'node:net';

export type TrustedProxies = ReadonlySet<string>;

/** Parses GATEHOUSE_TRUSTED_PROXIES: IP addresses separated by commas or spaces. */
export function parseTrustedProxies(text: string | undefined): TrustedProxies {
  const proxies = new Set<string>();
  for (const part of (text ?? '').split(/[\s,]+/)) {
    if (part === '') continue;
    const address = unmapped(part);
    if (net.isIP(address) === 0) throw new Error(`not an IP address: "${part}"`);
    proxies.add(canonical(address));
  }
  return proxies;
}

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is the IPv4 address. */
export function unmapped(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** The eight groups of an IPv6 address, expanded (`::` filled with zeros). */
export function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const last = right.length > 0 ? right[right.length - 1]! : left[left.length - 1];
  // an embedded IPv4 tail (::1.2.3.4) stands for two groups
  if (last !== undefined && net.isIPv4(last)) {
    const octets = last.split('.').map(Number);
    const groups = [((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16)];
    if (right.length > 0) right.splice(right.length - 1, 1, ...groups);
    else left.splice(left.length - 1, 1, ...groups);
  }
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.replace(/^0+(?=.)/, ''));
}

/** One spelling per address (IPv6 expanded, leading zeros dropped), for comparing addresses. */
export function canonical(address: string): string {
  return net.isIPv6(address) ? ipv6Groups(address).join(':') : address;
}

