import type { AccessTokenClaims } from './access-token-claims.ts';
import { RevocationCache } from './revocation-cache.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const claims = (jti: string, grantId?: string): AccessTokenClaims => ({
  jti,
  sub: 'user',
  clientId: 'client',
  scopes: ['openid'],
  audience: ['client'],
  iat: NOW / 1000 - 10,
  exp: NOW / 1000 + 3600,
  grantId,
});

describe('RevocationCache', () => {
  it('answers nothing until it is live: the database must decide', () => {
    const cache = new RevocationCache();
    cache.add([{ id: 'grant-1', until: NOW + 60_000 }]);
    expect(cache.anyRevoked(['grant-1'], NOW)).toBeUndefined();
    cache.remember('hash', { claims: claims('t1'), instanceId: 'i' }, cache.epoch);
    expect(cache.token('hash')).toBeUndefined();
  });

  it('keeps announcements received while loading, merging them with what was loaded', () => {
    const cache = new RevocationCache();
    cache.add([{ id: 'announced', until: NOW + 60_000 }]);
    cache.resume([{ id: 'loaded', until: NOW + 60_000 }]);
    expect(cache.anyRevoked(['announced'], NOW)).toBe(true);
    expect(cache.anyRevoked(['loaded'], NOW)).toBe(true);
    expect(cache.anyRevoked(['other'], NOW)).toBe(false);
  });

  it.each([
    ['an id whose revocation has expired', NOW - 1, false],
    ['an id revoked until later', NOW + 1, true],
  ])('%s', (_name, until, revoked) => {
    const cache = new RevocationCache();
    cache.resume([{ id: 'x', until }]);
    expect(cache.anyRevoked(['x'], NOW)).toBe(revoked);
  });

  it('forgets remembered tokens when it may have missed announcements, and refuses rows read before', () => {
    const cache = new RevocationCache();
    cache.resume([]);
    cache.remember('h1', { claims: claims('t1'), instanceId: 'i' }, cache.epoch);
    expect(cache.token('h1')?.claims.jti).toBe('t1');
    const readBefore = cache.epoch;
    cache.suspend();
    expect(cache.token('h1')).toBeUndefined();
    expect(cache.anyRevoked(['t1'], NOW)).toBeUndefined();
    cache.resume([]);
    expect(cache.token('h1')).toBeUndefined();
    cache.remember('h2', { claims: claims('t2'), instanceId: 'i' }, readBefore);
    expect(cache.token('h2')).toBeUndefined(); // read before the gap: may describe a revoked token
    cache.remember('h2', { claims: claims('t2'), instanceId: 'i' }, cache.epoch);
    expect(cache.token('h2')?.claims.jti).toBe('t2');
  });
});
