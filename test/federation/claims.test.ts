/**
 * An OpenID provider's standard claims to a profile (src/domain/federation/claims.ts), as ZITADEL's
 * generic OIDC provider maps them; a verification flag counts only with the value it vouches for.
 */
import { mapOidcClaims } from '../../src/domain/federation/claims.ts';

describe('mapping an OpenID provider claims', () => {
  it('maps every standard claim of the table', () => {
    expect(
      mapOidcClaims({
        sub: 'x',
        preferred_username: 'grace',
        given_name: 'Grace',
        family_name: 'Hopper',
        name: 'Grace Hopper',
        nickname: 'Amazing Grace',
        email: 'grace@example.org',
        email_verified: true,
        phone_number: '+1 555 0100',
        phone_number_verified: true,
        locale: 'en-US',
        picture: 'https://example.org/g.png',
      }),
    ).toEqual({
      userName: 'grace',
      givenName: 'Grace',
      familyName: 'Hopper',
      displayName: 'Grace Hopper',
      nickName: 'Amazing Grace',
      email: 'grace@example.org',
      emailVerified: true,
      phone: '+1 555 0100',
      phoneVerified: true,
      locale: 'en-US',
    });
  });

  it.each([
    [{ email: 'a@example.org', email_verified: true }, true],
    [{ email: 'a@example.org', email_verified: 'true' }, true],
    [{ email: 'a@example.org', email_verified: false }, false],
    [{ email: 'a@example.org', email_verified: 'yes' }, false],
    [{ email: 'a@example.org', email_verified: 1 }, false],
    [{ email: 'a@example.org' }, false],
    [{ email_verified: true }, false],
    [{ email: '  ', email_verified: true }, false],
  ])('%j: the address counts as verified: %s', (claims, verified) => {
    expect(mapOidcClaims(claims).emailVerified).toBe(verified);
  });

  it('leaves out what is missing, empty or not a string', () => {
    expect(mapOidcClaims({ given_name: '', family_name: 42, name: ['x'], phone_number_verified: true, locale: null })).toEqual({ emailVerified: false, phoneVerified: false });
  });
});
