/**
 * Requests to an external identity provider (discovery, key set, token and user endpoints).
 *
 * Whoever may configure a provider (an organization's owner) chooses the URLs Gatehouse fetches, so
 * every request is a way into the operator's network (server-side request forgery, OWASP SSRF
 * Prevention Cheat Sheet). Hence: only `https`, and only public addresses, checked after DNS
 * resolution at every request and connected to exactly as checked, so a name that resolves to a
 * public address at configuration time and to 10.0.0.5 at sign-in (DNS rebinding) is still refused.
 * Responses are bounded in time and size (docs/federation.md#how-gatehouse-talks-to-a-provider).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface OutboundOptions {
  /** GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: lifts the address and the scheme rule (development, tests). */
  allowPrivateNetworks: boolean;
  /** Milliseconds for the whole request, from connecting to the last byte. Default 10 s. */
  timeoutMs?: number;
  /** Largest response body accepted. Default 1 MiB. */
  maxResponseBytes?: number;
}

export const OUTBOUND_TIMEOUT_MS = 10_000;
export const OUTBOUND_MAX_RESPONSE_BYTES = 1024 * 1024;

/** A provider could not be asked: refused address, unreachable, too slow, answer too large. */
export class UpstreamUnavailable extends Error {
  /** A short reason, safe to show (it names no secrets, only the URL's host and the address). */
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'UpstreamUnavailable';
    this.reason = reason;
  }
}

// Addresses no provider may live at: RFC 6890 special-purpose ranges that reach the local host or the
// local network. IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are checked
// by their IPv4 address instead (embeddedIpv4).
const IPV4_REFUSED: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'], // "this network" (RFC 1122 3.2.1.3); 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8, 'private'], // RFC 1918
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT, RFC 6598
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // also cloud metadata services (169.254.169.254)
  ['172.16.0.0', 12, 'private'], // RFC 1918
  ['192.0.0.0', 24, 'private'], // IETF protocol assignments, RFC 6890
  ['192.168.0.0', 16, 'private'], // RFC 1918
  ['198.18.0.0', 15, 'private'], // benchmarking networks, RFC 2544
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // and 255.255.255.255, the broadcast address
];
const IPV6_REFUSED: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'], // RFC 4193
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'], // deprecated by RFC 3879, still routed locally by some stacks
  ['ff00::', 8, 'multicast'],
];

function blocks(ranges: Array<[string, number, string]>, family: 'ipv4' | 'ipv6'): Array<[net.BlockList, string]> {
  return ranges.map(([address, prefix, kind]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, family);
    return [list, kind];
  });
}
const IPV4_BLOCKS = blocks(IPV4_REFUSED, 'ipv4');
const IPV6_BLOCKS = blocks(IPV6_REFUSED, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (any textual form Node's URL parser accepts). */
function ipv6Groups(address: string): number[] {
  // The WHATWG URL parser canonicalizes IPv6 (RFC 5952), writing an embedded dotted IPv4 as hex.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

/** The IPv4 address an IPv6 address stands for, when it embeds one that a host would reach. */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeroUntil = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUntil(5) && g[5] === 0xffff) return v4(g[6]!, g[7]!); // IPv4-mapped ::ffff:0:0/96
  if (zeroUntil(6) && (g[6] !== 0 || g[7]! > 1)) return v4(g[6]!, g[7]!); // IPv4-compatible ::/96 (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4(g[6]!, g[7]!); // NAT64 64:ff9b::/96
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 6to4 2002::/16
  return undefined;
}

/** Why an address may not be fetched from ("loopback", "private", …), or undefined for a public one. */
export function addressProblem(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return addressProblem(v4);
    return IPV6_BLOCKS.find(([list]) => list.check(address, 'ipv6'))?.[1];
  }
  return IPV4_BLOCKS.find(([list]) => list.check(address, 'ipv4'))?.[1];
}

interface Resolved {
  address: string;
  family: 4 | 6;
}

/** Resolves a URL's host and checks every address it has; throws UpstreamUnavailable when refused. */
async function resolveChecked(hostname: string, allowPrivateNetworks: boolean): Promise<Resolved[]> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  let addresses: Resolved[];
  if (net.isIP(bare) !== 0) addresses = [{ address: bare, family: net.isIP(bare) as 4 | 6 }];
  else {
    try {
      addresses = (await dns.promises.lookup(bare, { all: true, verbatim: true })) as Resolved[];
    } catch (error) {
      throw new UpstreamUnavailable(`host not found (${bare})`, { cause: error });
    }
    if (addresses.length === 0) throw new UpstreamUnavailable(`host not found (${bare})`);
  }
  if (!allowPrivateNetworks) {
    // Every address, not just the first: the connection may fall back to any of them.
    for (const { address } of addresses) {
      const kind = addressProblem(address);
      if (kind !== undefined) throw new UpstreamUnavailable(`resolves to ${kind === 'unspecified' ? 'an' : 'a'} ${kind} address (${address})`);
    }
  }
  return addresses;
}

function schemeProblem(url: URL, allowPrivateNetworks: boolean): string | undefined {
  if (url.protocol === 'https:') return undefined;
  if (allowPrivateNetworks && url.protocol === 'http:') return undefined;
  return 'must be an https URL';
}

/**
 * Why Gatehouse would refuse to fetch this URL, or undefined when it may. For checking a provider's
 * configuration when it is saved; outboundFetch checks again at every request.
 */
export async function outboundUrlProblem(url: string, options: { allowPrivateNetworks: boolean }): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  const scheme = schemeProblem(parsed, options.allowPrivateNetworks);
  if (scheme !== undefined) return scheme;
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password';
  try {
    await resolveChecked(parsed.hostname, options.allowPrivateNetworks);
    return undefined;
  } catch (error) {
    if (error instanceof UpstreamUnavailable) return error.reason;
    throw error;
  }
}

export interface OutboundInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: string | URLSearchParams | Uint8Array | null;
  signal?: AbortSignal | null;
}

// Statuses whose Response must not have a body (the Fetch standard's "null body status").
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * fetch for a provider's endpoints: https to public addresses only (unless allowed), the address
 * checked when connecting, no redirects followed (a 3xx is returned as it is, like fetch's
 * `redirect: 'manual'`, so a redirect cannot lead to an unchecked URL), a time limit for the whole
 * exchange and a size limit for the body. Failures are UpstreamUnavailable.
 */
export async function outboundFetch(url: string | URL, init: OutboundInit, options: OutboundOptions): Promise<Response> {
  const target = new URL(url);
  const scheme = schemeProblem(target, options.allowPrivateNetworks);
  if (scheme !== undefined) throw new UpstreamUnavailable(`${target.origin} ${scheme}`);
  const timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? OUTBOUND_MAX_RESPONSE_BYTES;
  const headers = new Headers(init.headers);
  let body: Buffer | undefined;
  if (init.body instanceof URLSearchParams) {
    body = Buffer.from(init.body.toString());
    if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
  } else if (typeof init.body === 'string') body = Buffer.from(init.body);
  else if (init.body instanceof Uint8Array) body = Buffer.from(init.body);
  if (body !== undefined) headers.set('content-length', String(body.length));
  if (!headers.has('user-agent')) headers.set('user-agent', 'Gatehouse');

  // Resolve and check first, so the refusal names the address; then connect to exactly these addresses.
  const addresses = await resolveChecked(target.hostname, options.allowPrivateNetworks);
  const lookup: net.LookupFunction = (_hostname, lookupOptions, callback) => {
    const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
    const usable = wanted.length > 0 ? wanted : addresses;
    if (lookupOptions.all) (callback as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
    else callback(null, usable[0]!.address, usable[0]!.family);
  };

  const controller = new AbortController();
  let why: string | undefined;
  const stop = (reason: string) => {
    why ??= reason;
    controller.abort();
  };
  const timer = setTimeout(() => stop(`${target.host} did not answer within ${timeoutMs / 1000} s`), timeoutMs);
  const onCallerAbort = () => stop('the request was cancelled');
  init.signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (init.signal?.aborted) onCallerAbort();

  try {
    return await new Promise<Response>((resolve, reject) => {
      const requestHeaders: Record<string, string> = {};
      headers.forEach((value, name) => (requestHeaders[name] = value));
      const request = (target.protocol === 'https:' ? https : http).request(
        target,
        // agent: false, a fresh connection each time: a pooled one would skip the address check.
        { method: init.method ?? 'GET', headers: requestHeaders, lookup, signal: controller.signal, agent: false },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const declared = Number(response.headers['content-length']);
          if (Number.isFinite(declared) && declared > maxBytes) {
            stop(`${target.host} answered with more than ${maxBytes} bytes`);
            return;
          }
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) stop(`${target.host} answered with more than ${maxBytes} bytes`);
            else chunks.push(chunk);
          });
          response.on('error', reject);
          response.on('end', () => {
            if (why !== undefined) return;
            const status = response.statusCode ?? 502;
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (value === undefined) continue;
              for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v);
            }
            const content = NULL_BODY.has(status) ? null : Buffer.concat(chunks);
            resolve(new Response(content, { status: status < 200 || status > 599 ? 502 : status, statusText: response.statusMessage ?? '', headers: responseHeaders }));
          });
        },
      );
      request.on('error', reject);
      controller.signal.addEventListener('abort', () => reject(new Error(why)), { once: true });
      request.end(body);
    });
  } catch (error) {
    if (why !== undefined) throw new UpstreamUnavailable(why, { cause: error });
    const code = (error as NodeJS.ErrnoException).code;
    throw new UpstreamUnavailable(`${target.host} could not be reached${code ? ` (${code})` : ''}`, { cause: error });
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener('abort', onCallerAbort);
  }
}
