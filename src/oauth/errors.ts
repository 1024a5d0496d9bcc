/**
 * The OAuth endpoints' errors (RFC 6749 §5.2, RFC 6750 §3.1), the rest of the one OAuth error
 * hierarchy whose base lives in http/errors.ts (form parsing and the login UI raise it too). For
 * invalid_client and invalid_token the public description is generic so that nothing about other
 * clients' grants leaks; the reason goes to `detail`. invalid_grant says why only in the words of
 * `GRANT_REFUSALS` below. OAuth code imports every error from here, the base and invalid_request
 * included.
 */
import { OAuthError } from '../http/errors.ts';

export { InvalidRequest, OAuthError } from '../http/errors.ts';

export class InvalidClient extends OAuthError {
  /** Set when the client tried HTTP Basic: the 401 then carries a Basic challenge (RFC 6749 §5.2). */
  readonly basic: boolean;
  /**
   * Whether the failure counts towards the address's limit of failed authentications: false only
   * for an attempt that guesses nothing (an empty secret for a client that has none).
   */
  readonly guess: boolean;
  /** The client id presented, for the operator's log. */
  readonly clientId: string | undefined;
  /**
   * `description`: what the client is told; the generic words unless the client exists and used a
   * method it is not registered for (docs/decisions.md#client-authentication).
   */
  constructor(detail: string, basic = false, guess = true, more: { clientId?: string; description?: string } = {}) {
    super('invalid_client', 401, more.description ?? 'client authentication failed', detail);
    this.basic = basic;
    this.guess = guess;
    this.clientId = more.clientId;
  }

  override notable(): Record<string, unknown> {
    return { clientId: this.clientId };
  }
}

/**
 * Everything invalid_grant may say to a client, as fixed text. A reason is told only to the client
 * the grant belongs to, once it has authenticated and the grant is its own, and only what that
 * client knows already or needs to repair its own request (its verifier, its redirect URI, whether
 * its code is spent): a code of another client, of another instance and no code at all read alike,
 * so the endpoint is no oracle for other clients' codes. Grants that say nothing more (refresh
 * tokens, assertions, token exchange) keep `generic`.
 */
export const GRANT_REFUSALS = {
  generic: 'grant request is invalid',
  codeUnknown: 'code is unknown, or was issued to another client',
  codeExpired: 'code has expired',
  codeUsed: 'code was already used; the tokens it issued are revoked',
  redirectUri: 'redirect_uri does not match the authorization request',
  verifierMissing: 'code_verifier is required: the authorization request had a code_challenge',
  verifierMalformed: 'code_verifier must be 43 to 128 printable ASCII characters',
  verifierWrong: 'code_verifier does not match the code_challenge',
  verifierUnexpected: 'code_verifier was sent, but the authorization request had no code_challenge',
  pkceRequired: 'a public client must use PKCE',
  signInEnded: 'the sign-in of the code has ended',
} as const;

export type GrantRefusal = keyof typeof GRANT_REFUSALS;

export class InvalidGrant extends OAuthError {
  constructor(detail: string, refusal: GrantRefusal = 'generic') {
    super('invalid_grant', 400, GRANT_REFUSALS[refusal], detail);
  }
}

export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

export class UnauthorizedClient extends OAuthError {
  constructor(description: string) {
    super('unauthorized_client', 400, description);
  }
}

export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', 400, description);
  }
}

/** RFC 8693 §2.2.2: the requested audience is not one the presented tokens allow. */
export class InvalidTarget extends OAuthError {
  constructor(description: string) {
    super('invalid_target', 400, description);
  }
}

export class InvalidToken extends OAuthError {
  constructor(detail: string) {
    super('invalid_token', 401, 'access token is invalid', detail);
  }
}

/**
 * RFC 6750 §3.1: a request that lacks any authentication information gets the bare challenge and no
 * error code or other error information, so the body is an empty JSON object.
 */
export class NoAccessToken extends OAuthError {
  constructor() {
    super('no_access_token', 401, 'no access token');
  }

  override body(): Record<string, string> {
    return {};
  }
}
