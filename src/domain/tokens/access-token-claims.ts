/** What an access token says, JWT or opaque alike, and an access token as issued: the tokens wing's own words. */

export interface AccessTokenClaims {
  jti: string;
  sub: string;
  clientId: string;
  scopes: string[];
  audience: string[];
  iat: number;
  exp: number;
  /** The code or refresh grant the token belongs to: revoking the grant revokes the token. */
  grantId?: string | undefined;
  sessionId?: string | undefined;
  /** RFC 8693 §4.1 actor claim. */
  actor?: Record<string, unknown> | undefined;
  /** When and how the user signed in, when the token came from a sign-in (RFC 9068 §2.2.1). */
  authTime?: Date | undefined;
  amr?: string[] | undefined;
  /**
   * A machine user's personal access token (personal-access-tokens.ts): introspection finds it meant
   * for every application of the instance, as ZITADEL adds the introspecting client to its audience.
   */
  personal?: true | undefined;
}

export interface IssuedAccessToken {
  token: string;
  claims: AccessTokenClaims;
  expiresIn: number;
}
