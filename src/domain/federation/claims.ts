/**
 * What an OpenID provider's claims say about the person, as ZITADEL's generic OIDC provider maps them
 * (ZITADEL `internal/idp/providers/oidc/session.go`): OpenID Connect Core 1.0 §5.1 standard claims.
 */

/** The upstream user's profile. Unset fields: the provider said nothing (usable) about them. */
export interface UpstreamProfile {
  userName?: string;
  givenName?: string;
  familyName?: string;
  displayName?: string;
  nickName?: string;
  email?: string;
  /** True only when an OpenID provider vouches for the address (`email_verified`); never for generic OAuth. */
  emailVerified: boolean;
  phone?: string;
  phoneVerified: boolean;
  locale?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * `true`, or the string "true" some providers send (Amazon Cognito; ZITADEL's claim type accepts
 * both). Anything else, including a missing claim, is false.
 */
function flag(value: unknown): boolean {
  return value === true || value === 'true';
}

/** Standard claims (from userinfo or the ID token) to a profile: the generic OIDC column of ZITADEL's mapping. */
export function mapOidcClaims(claims: Record<string, unknown>): UpstreamProfile {
  const profile: UpstreamProfile = { emailVerified: false, phoneVerified: false };
  const fields: Array<[keyof UpstreamProfile, string]> = [
    ['userName', 'preferred_username'],
    ['givenName', 'given_name'],
    ['familyName', 'family_name'],
    ['displayName', 'name'],
    ['nickName', 'nickname'],
    ['email', 'email'],
    ['phone', 'phone_number'],
    ['locale', 'locale'],
  ];
  for (const [field, claim] of fields) {
    const value = text(claims[claim]);
    if (value !== undefined) (profile as unknown as Record<string, string>)[field] = value;
  }
  // A verification flag counts only together with the value it vouches for.
  profile.emailVerified = profile.email !== undefined && flag(claims['email_verified']);
  profile.phoneVerified = profile.phone !== undefined && flag(claims['phone_number_verified']);
  return profile;
}
