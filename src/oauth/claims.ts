/**
 * Claims about a user by granted scope (OIDC Core §5.4; docs/endpoints.md#userinfo-endpoint), for userinfo,
 * introspection and ID tokens.
 */
import type { User } from '../domain/instance/directory.ts';

export function userClaims(user: User, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  const put = (name: string, value: unknown) => {
    if (value !== null && value !== undefined && value !== '') claims[name] = value;
  };
  if (scopes.includes('profile')) {
    const name = user.displayName ?? ([user.givenName, user.familyName].filter(Boolean).join(' ') || null);
    put('name', name);
    put('given_name', user.givenName);
    put('family_name', user.familyName);
    put('nickname', user.nickname);
    put('preferred_username', user.loginName);
    put('locale', user.preferredLanguage);
    put('gender', user.gender);
    claims['updated_at'] = Math.floor(user.changedAt.getTime() / 1000);
  }
  if (scopes.includes('email') && user.email) {
    claims['email'] = user.email;
    claims['email_verified'] = user.emailVerified;
  }
  if (scopes.includes('phone') && user.phone) {
    claims['phone_number'] = user.phone;
    claims['phone_number_verified'] = user.phoneVerified;
  }
  if (scopes.includes('address') && user.address) claims['address'] = user.address;
  return claims;
}
