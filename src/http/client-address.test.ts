import { parseTrustedProxies } from '../config/ip-addresses.ts';
import { clientAddress, limitKey } from './client-address.ts';

const req = (remoteAddress: string, forwarded?: string) => ({ socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } });

describe('client addresses for per-address limits (docs/security.md 10.11)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('counts %s as %s', (address, key) => {
    expect(limitKey(address)).toBe(key);
  });

  it('ignores X-Forwarded-For from peers that are not trusted proxies', () => {
    expect(clientAddress(req('198.51.100.1', '203.0.113.7'), parseTrustedProxies(''))).toBe('198.51.100.1');
    expect(clientAddress(req('198.51.100.1', '203.0.113.7'), parseTrustedProxies('10.0.0.1'))).toBe('198.51.100.1');
  });

  it('behind trusted proxies takes the right-most address that is not a proxy', () => {
    const trusted = parseTrustedProxies('10.0.0.1, 10.0.0.2 ::1');
    expect(clientAddress(req('10.0.0.1', '203.0.113.7'), trusted)).toBe('203.0.113.7');
    // the client forged a first hop; the proxies appended the real one
    expect(clientAddress(req('10.0.0.1', '1.2.3.4, 203.0.113.7, 10.0.0.2'), trusted)).toBe('203.0.113.7');
    expect(clientAddress(req('::ffff:10.0.0.1', '2001:db8::5'), trusted)).toBe('2001:db8::5');
    expect(clientAddress(req('0:0:0:0:0:0:0:1', '203.0.113.9'), trusted)).toBe('203.0.113.9');
  });

  it('counts the proxy itself when the chain is missing or malformed', () => {
    const trusted = parseTrustedProxies('10.0.0.1');
    expect(clientAddress(req('10.0.0.1'), trusted)).toBe('10.0.0.1');
    expect(clientAddress(req('10.0.0.1', 'not-an-ip'), trusted)).toBe('10.0.0.1');
    expect(clientAddress(req('10.0.0.1', '10.0.0.1'), trusted)).toBe('10.0.0.1');
  });

  it('refuses a proxy list with something that is not an address', () => {
    expect(() => parseTrustedProxies('10.0.0.1, proxy.internal')).toThrow(/not an IP address/);
  });
});
